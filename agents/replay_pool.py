"""A pool over any replay file: the default roster (roles and tool agents of the embedded pool) crossed
with the models that file has recordings of. This is what `--pool replay:FILE` means."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from reso.agents.defaults import default_pool_path
from reso.agents.pool import PoolError


def recorded_models(replay_file: Path) -> list[str]:
    """The model names a replay JSONL has answers of, in first-seen order."""
    models: dict[str, None] = {}
    try:
        with replay_file.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    responses = json.loads(line).get("responses") or {}
                except (json.JSONDecodeError, AttributeError):
                    raise PoolError(f"{replay_file}:{number}: not a JSON object with 'responses'") from None
                models.update(dict.fromkeys(responses))
    except FileNotFoundError:
        raise PoolError(f"{replay_file}: replay file not found") from None
    if not models:
        raise PoolError(f"{replay_file}: no recorded responses found")
    return list(models)


def replay_pool_config(replay_file: Path) -> dict[str, Any]:
    """The pool document: the default pool's roles and explicit agents, over `replay_file`'s models."""
    default = yaml.safe_load(default_pool_path().read_text(encoding="utf-8"))
    path = replay_file.resolve()
    models = [{"spec": f"replay:{path}#{model}", "name": model.rsplit("/", 1)[-1]}
              for model in recorded_models(path)]
    return {"name": f"replay-{path.stem}", "models": models, "roles": default["roles"],
            "agents": default.get("agents", [])}


def write_replay_pool(replay_file: Path, dest_dir: Path) -> Path:
    """Write the replay pool YAML into `dest_dir` (named by the file's path) and return its path."""
    config = replay_pool_config(replay_file)
    digest = hashlib.sha1(str(replay_file.resolve()).encode()).hexdigest()[:10]
    target = dest_dir / f"pool-{digest}.yaml"
    dest_dir.mkdir(parents=True, exist_ok=True)
    target.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return target
