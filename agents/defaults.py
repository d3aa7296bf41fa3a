"""Where the embedded defaults live: the offline pools, their recorded answers and the prompts those were
recorded with, and the list prices of the recorded models, all shipped with the package."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

# Replay files recorded with the GSM8K 8-shot "Question: … Answer:" prefix (RouteLLM's recordings), by file
# name; every other replay file is counted as recorded zero-shot with the JSON-answer instruction
# (ZeroEval's recordings).
FEWSHOT_REPLAY_FILES = frozenset({"gsm8k_replay_dev.jsonl"})


def data_dir() -> Path:
    """The package's data folder (pools, vendored recordings, prompts, prices, licences, notice)."""
    return Path(str(files("reso.agents.data")))


def default_pool_path() -> Path:
    return data_dir() / "default_pool.yaml"


def zeroeval_pool_path() -> Path:
    """The curated many-model pool over the vendored ZeroEval MATH and GSM8K recordings."""
    return data_dir() / "zeroeval_pool.yaml"


def all_models_pool_path() -> Path:
    """Every model of the vendored ZeroEval recordings in the curated pool's four roles."""
    return data_dir() / "all_pool.yaml"


def open_pool_path() -> Path:
    """The open-weight models of the vendored ZeroEval recordings in the curated pool's four roles."""
    return data_dir() / "open_pool.yaml"


def default_replay_path() -> Path:
    return data_dir() / "gsm8k_replay_dev.jsonl"


def fewshot_prefix_path() -> Path:
    return data_dir() / "fewshot_prefix.txt"


def zeroshot_prompt_path() -> Path:
    """The zero-shot instruction (with a `{question}` slot) that many-model replay calls are counted with."""
    return data_dir() / "zeroshot_json_prompt.txt"


def vendored_prices_path() -> Path:
    """List prices of the recorded models (ZeroEval's model names)."""
    return data_dir() / "prices.yaml"
