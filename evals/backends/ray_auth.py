"""Token authentication of the Ray instances this project starts itself: the local cluster of `reso bench
scale` and the tests (`ray_cluster.py`), and the local instance of `reso eval --backend ray` without
`--address` (`ray_backend.py`).

Ray turns token authentication on for a local `ray.init()`, which writes a token to `~/.ray/auth_token`
where none exists. From then on a `ray start --head` on that machine picks that file up, while a
`ray start --address` node or a driver given an address does not, and the head refuses them. So each
instance started here gets a fresh token of its own, given to every process of it through the variables Ray
documents (`RAY_AUTH_MODE=token` and `RAY_AUTH_TOKEN`, which Ray reads before any token file), and nothing
is read from or written to `~/.ray`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import secrets
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["MODE_VAR", "TOKEN_PATH_VAR", "TOKEN_VAR", "new_token", "token_environment", "use_token"]

MODE_VAR = "RAY_AUTH_MODE"
TOKEN_VAR = "RAY_AUTH_TOKEN"
TOKEN_PATH_VAR = "RAY_AUTH_TOKEN_PATH"


def new_token() -> str:
    """A fresh token: 256 random bits, as `ray get-auth-token --generate` makes them."""
    return secrets.token_hex(32)


def token_environment(token: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) with token authentication on and `token` as the token,
    for a process of a cluster started here: a `ray start` node, or a driver in another process."""
    environment = {name: value for name, value in (os.environ if base is None else base).items()
                   if name != TOKEN_PATH_VAR}
    return environment | {MODE_VAR: "token", TOKEN_VAR: token}


def _refresh_ray() -> None:
    """Make this process's Ray see the current environment: Ray reads `RAY_AUTH_MODE` into a config it caches,
    and caches the token it loaded. The config first, then the token: the order Ray's own tests use, so that
    no thread of a draining connection reloads a token while the config still names the old mode."""
    raylet: Any = importlib.import_module("ray._raylet")  # its type stub omits these two

    raylet.Config.initialize("")
    raylet.AuthenticationTokenLoader.instance().reset_cache()


@contextlib.contextmanager
def use_token(token: str | None) -> Iterator[None]:
    """This process (a driver) uses `token` in the `with` block: for `ray.init` of a cluster started with it,
    or of a local instance started in the block. The environment is restored at the end, so call
    `ray.shutdown()` inside the block. None changes nothing (a cluster given by address: its token is the
    user's, from the environment or the token file, as Ray documents)."""
    if token is None:
        yield
        return
    names = (MODE_VAR, TOKEN_VAR, TOKEN_PATH_VAR)
    saved = {name: os.environ.get(name) for name in names}
    os.environ.pop(TOKEN_PATH_VAR, None)
    os.environ.update({MODE_VAR: "token", TOKEN_VAR: token})
    _refresh_ray()
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _refresh_ray()
