"""Where the embedded defaults live: the offline pools, their recorded answers and the prompts those were
recorded with, the list prices of the recorded models, and the trained agent database of the default pool,
all shipped with the package."""

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
    """The default pool of `reso solve`, `reso eval` and the Python API: the curated twelve-model roster the
    main job runs on (`zeroeval_pool_path`)."""
    return zeroeval_pool_path()


def default_dadb_path() -> Path:
    """The default pool's trained agent database: a DADB export (`AgentDatabase.export_json`) with its
    provenance, made by the main job's training (`python -m reso.evals.jobs.default_dadb`)."""
    return data_dir() / "zeroeval_dadb.json"


def zeroeval_pool_path() -> Path:
    """The curated many-model pool over the vendored ZeroEval MATH and GSM8K recordings."""
    return data_dir() / "zeroeval_pool.yaml"


def two_model_pool_path() -> Path:
    """The earlier two-model pool: GPT-4 and Mixtral's recorded GSM8K answers (`reso demo --world two-model`)."""
    return data_dir() / "two_model_pool.yaml"


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
