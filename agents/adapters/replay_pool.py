"""A pool over replay files: the default roster (roles and tool agents of the default pool) crossed with
every model the files have recordings of. This is what `--pool replay:FILE[,FILE…]` means.

With several files, a model recorded in more than one (the same name on MATH and on GSM8K) is one model
whose agents answer from whichever of its files records the question. `replay:FILES#MODEL` keeps one model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from reso.agents.adapters.replay import ReplayError, replay_table, resolve_replay_path, split_replay_target
from reso.agents.defaults import default_pool_path
from reso.agents.pool import PoolError


def recorded_models(replay_files: Sequence[Path]) -> dict[str, list[Path]]:
    """Each model the files record, in first-seen order, with the files (in the given order) that record it.

    Raises:
        PoolError: A file is missing or invalid, or records no responses.
    """
    models: dict[str, list[Path]] = {}
    for path in replay_files:
        try:
            table = replay_table(path)
        except ReplayError as error:
            raise PoolError(str(error)) from None
        if not table.models:
            raise PoolError(f"{path}: no recorded responses found")
        for model in table.models:
            models.setdefault(model, []).append(path)
    return models


def _agent_names(models: Sequence[str]) -> dict[str, str]:
    """The name each model goes by in agent ids: the part after the last `/`, unless two models share it."""
    short = {model: model.rsplit("/", 1)[-1] for model in models}
    taken = list(short.values())
    return {model: name if taken.count(name) == 1 else model for model, name in short.items()}


def _stem(path: Path) -> str:
    return re.sub(r"\.jsonl(\.gz)?$", "", path.name)


def replay_pool_config(target: str, prices: Path | None = None) -> dict[str, Any]:
    """The pool document of `replay:<target>`: the default pool's roles and explicit agents, over the
    models of the target's files (or the one model after `#`).

    Args:
        target: `FILE[,FILE…]` or `FILE[,FILE…]#MODEL`; relative files resolve as in replay specs (working
            directory, then the packaged data folder).
        prices: A price list for the models (`prices:` of the document); None: the shipped list.

    Raises:
        PoolError: No file named, a missing or invalid file, or a model that none of the files records.
    """
    names, only = split_replay_target(target)
    if not names:
        raise PoolError(f"replay:{target}: name at least one replay file: replay:FILE[,FILE…][#MODEL]")
    files = list(dict.fromkeys(resolve_replay_path(name) for name in names))
    models = recorded_models(files)
    if only:
        if only not in models:
            known = ", ".join(sorted(models))
            raise PoolError(f"replay:{target}: no recordings for model {only!r}; "
                            f"the files' models are: {known}")
        models = {only: models[only]}
    default = yaml.safe_load(default_pool_path().read_text(encoding="utf-8"))
    names_by_model = _agent_names(list(models))
    document: dict[str, Any] = {
        "name": "replay-" + "+".join(_stem(path) for path in files),
        "models": [{"spec": f"replay:{','.join(map(str, paths))}#{model}", "name": names_by_model[model]}
                   for model, paths in models.items()],
        "roles": default["roles"],
        "agents": default.get("agents", []),
    }
    if prices is not None:
        document["prices"] = str(prices.expanduser().resolve())
    return document
