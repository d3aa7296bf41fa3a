"""What the command line's `--pool` and `--prices` name, as one pool.

`--pool` is a pool YAML file, `replay:FILE[,FILE…][#MODEL]` (the default roster over recorded models,
`reso.agents.adapters.replay_pool`) or nothing (the embedded default pool); `--prices FILE` is a price list
(`reso.agents.adapters.prices`) that prices the pool's models the pool does not price itself. The layers below take
a pool as a YAML path, so a combination that is not a plain file is written out as one (with absolute
paths, so it loads from anywhere), named by its content.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from reso.agents.defaults import default_pool_path
from reso.agents.pool import (
    Pool,
    PoolConfig,
    pool_from_dict,
    read_pool_document,
    resolve_model_paths,
)

REPLAY_PREFIX = "replay:"


def pool_document(pool: str | None, prices: Path | None = None) -> tuple[Any, Path | None]:
    """The pool document that `--pool` and `--prices` name, and the file whose folder its relative paths
    resolve against (None when there is none).

    Raises:
        PoolError: A missing or unreadable pool file, or a bad `replay:` target.
    """
    if pool and pool.startswith(REPLAY_PREFIX):
        from reso.agents.adapters.replay_pool import replay_pool_config

        return replay_pool_config(pool.removeprefix(REPLAY_PREFIX), prices), None
    source = Path(pool).expanduser() if pool else default_pool_path()
    document = read_pool_document(source)
    if prices is not None and isinstance(document, dict):
        document = {**document, "prices": str(prices.expanduser().resolve())}
    return document, source.resolve()


def load_pool_for(pool: str | None, prices: Path | None = None) -> Pool:
    """The pool that `--pool` and `--prices` name, loaded and validated."""
    document, source = pool_document(pool, prices)
    return pool_from_dict(document, source)


def absolute_document(document: dict[str, Any], source: Path) -> dict[str, Any]:
    """`document` with its relative model files and price list made absolute against `source`'s folder."""
    config = PoolConfig.model_validate(document)  # the caller has validated it: this cannot fail
    base = source.parent
    update: dict[str, Any] = {
        "models": [resolve_model_paths(model, base) for model in config.models],
        "agents": [agent.model_copy(update={"model": resolve_model_paths(agent.model, base)})
                   for agent in config.agents],
    }
    if config.prices is not None and not Path(config.prices).expanduser().is_absolute():
        update["prices"] = str((base / config.prices).resolve())
    return config.model_copy(update=update).model_dump(mode="json", exclude_none=True, exclude_defaults=True)


def _default_dest() -> Path:
    user = os.getuid() if hasattr(os, "getuid") else "user"
    return Path(tempfile.gettempdir()) / f"reso-pools-{user}"


@dataclass(frozen=True)
class PoolFile:
    """The pool YAML a run reads: `path`, and for a pool written out (`plan_pool_file`) its `text` and the
    `pool` as it loads from there, so a run can check everything before it writes the file (`write`)."""

    path: str
    text: str | None = None
    pool: Pool | None = None

    def write(self) -> str:
        """Write the file when it is one to write (idempotent: named by content); returns its path."""
        if self.text is None:
            return self.path
        target = Path(self.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        # Written aside and renamed: concurrent runs of the same pool write the same bytes to the same name.
        scratch = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        scratch.write_text(self.text, encoding="utf-8")
        os.replace(scratch, target)
        return str(target)


def plan_pool_file(pool: str | None, prices: Path | None, dest_dir: Path | None = None) -> PoolFile:
    """The pool file `pool_file_for` would return, validated but not yet written.

    Raises:
        PoolError: An invalid pool, replay target or price list, or a model with no price.
    """
    if prices is None and not (pool and pool.startswith(REPLAY_PREFIX)):
        return PoolFile(pool or "")
    document, source = pool_document(pool, prices)
    pool_from_dict(document, source)
    if source is not None:
        document = absolute_document(document, source)
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    folder = dest_dir or _default_dest()
    target = folder / f"pool-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:10]}.yaml"
    return PoolFile(str(target), text, pool_from_dict(yaml.safe_load(text), target.resolve()))


def pool_file_for(pool: str | None, prices: Path | None, dest_dir: Path | None = None) -> str:
    """A pool YAML path for `--pool` and `--prices` ("" for the default pool without a price list).

    A pool file without `--prices` is returned as given; anything else is validated (so errors surface
    here, naming the file and field) and written into `dest_dir` (default: a folder in the system's
    temporary directory) as `pool-<digest>.yaml`.

    Raises:
        PoolError: An invalid pool, replay target or price list, or a model with no price.
    """
    return plan_pool_file(pool, prices, dest_dir).write()
