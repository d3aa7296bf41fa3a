"""Where the embedded defaults live: the offline pool and its recorded answers, shipped with the package."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def data_dir() -> Path:
    """The package's data folder (default pool YAML, vendored GSM8K recordings, licence, notice)."""
    return Path(str(files("reso.agents.data")))


def default_pool_path() -> Path:
    return data_dir() / "default_pool.yaml"


def default_replay_path() -> Path:
    return data_dir() / "gsm8k_replay_dev.jsonl"


def fewshot_prefix_path() -> Path:
    return data_dir() / "fewshot_prefix.txt"
