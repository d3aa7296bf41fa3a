"""Named datasets: the released ReSo benchmarks (resolved against a data root), the vendored GSM8K replay
file, the GSM8K-MAS splits built from it on demand, linked MAS splits built on demand from the vendored
many-model recordings (MATH Level 5, GSM8K), and whatever a user registers."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reso.evals.datasets.loaders import load_file
from reso.evals.datasets.problem import EXACT_REL_TOL, DatasetError, Problem

if TYPE_CHECKING:
    from reso.evals.synth.gsm8k import Split

DATA_ROOT_ENV = "RESO_DATA_ROOT"
DEFAULT_DATA_ROOT = Path("..") / "shared" / "data"

RELEASE_FILES = {
    "math-mas-easy": "reso-mas/MATH-MAS-Easy.json",
    "math-mas-medium": "reso-mas/MATH-MAS-Medium.json",
    "math-mas-hard": "reso-mas/MATH-MAS-Hard.json",
    "scibench-mas-easy": "reso-mas/Scibench-MAS-Easy.json",
    "scibench-mas-medium": "reso-mas/Scibench-MAS-Medium.json",
}

# GSM8K-MAS as the registry builds it: sub-questions per item, and items per split. Fixed seeds make every
# build of a name identical; the split is by question, so train and test share no GSM8K question.
GSM8K_MAS_SIZES = {"easy": 3, "medium": 5, "hard": 7}
GSM8K_MAS_ITEMS: dict[Split, int] = {"train": 200, "test": 100}
GSM8K_MAS_SEED = 0
# Linked MAS splits of the vendored many-model recordings (package data, reso.agents.defaults.data_dir()),
# built like GSM8K-MAS (same sizes, counts, seed and split by question) but with linked constants.
LINKED_MAS_FILES = {"math-l5-mas": "math_l5_dev.jsonl.gz", "gsm8k-l-mas": "gsm8k_dev.jsonl.gz"}


@dataclass(frozen=True)
class _Entry:
    description: str
    build: Callable[[Path | None], list[Problem]]


_REGISTRY: dict[str, _Entry] = {}


def register_dataset(name: str, builder: Callable[[], list[Problem]] | Path | str) -> None:
    """Make a dataset loadable by name.

    Args:
        name: The name users pass to `load_dataset` (replaces an earlier registration of that name).
        builder: A file (release format, plain JSONL or JSON list) or a function returning the problems.
    """
    if isinstance(builder, (str, Path)):
        path = Path(builder)
        _REGISTRY[name] = _Entry(str(path), lambda _root: load_file(path, id_prefix=name, source=name))
    elif callable(builder):
        doc = (builder.__doc__ or "").strip().splitlines()
        _REGISTRY[name] = _Entry(doc[0] if doc else f"built by {getattr(builder, '__name__', 'a function')}",
                                 lambda _root: builder())
    else:
        raise TypeError(f"builder for {name!r} must be a path or a callable, got {type(builder).__name__}")


def list_datasets() -> dict[str, str]:
    """Registered names and what each one is (a path, or how it is built)."""
    return {name: entry.description for name, entry in sorted(_REGISTRY.items())}


def load_dataset(name_or_path: str | Path, *, limit: int | None = None,
                 data_root: str | Path | None = None) -> list[Problem]:
    """The problems of a registered dataset or of a dataset file.

    Args:
        name_or_path: A name from `list_datasets()` or a path to a `.json` / `.jsonl` file.
        limit: Keep only the first `limit` problems.
        data_root: Where the shared data lives for names such as "math-mas-easy"; default the environment
            variable RESO_DATA_ROOT, else `../shared/data` relative to the current directory.

    Raises:
        DatasetError: Unknown name and no such file, a missing data file (naming what was looked for), or
            a malformed record.
    """
    if limit is not None and limit < 0:
        raise DatasetError(f"limit must be >= 0, got {limit}")
    key = str(name_or_path)
    if key in _REGISTRY:
        problems = _REGISTRY[key].build(Path(data_root) if data_root is not None else None)
    elif Path(key).is_file():
        problems = load_file(Path(key))
    else:
        raise DatasetError(f"unknown dataset {key!r}: not a registered name ({', '.join(sorted(_REGISTRY))}) "
                           f"and no file at {Path(key).resolve()}")
    return problems[:limit] if limit is not None else problems


def resolve_data_root(data_root: str | Path | None = None) -> tuple[Path, str]:
    """The data root to use and where it came from: the explicit argument, else $RESO_DATA_ROOT, else
    `../shared/data` relative to the current directory."""
    if data_root is not None:
        return Path(data_root), "run.data_root"
    if os.environ.get(DATA_ROOT_ENV):
        return Path(os.environ[DATA_ROOT_ENV]), f"${DATA_ROOT_ENV}"
    return Path.cwd() / DEFAULT_DATA_ROOT, "the default ../shared/data"


def _release_entry(name: str, relative: str) -> _Entry:
    def build(data_root: Path | None) -> list[Problem]:
        root, origin = resolve_data_root(data_root)
        path = root / relative
        if not path.is_file():
            raise DatasetError(f"dataset {name!r} needs {relative} under the data root {root} (from {origin}), "
                               f"but {path} does not exist; set run.data_root (reso eval --set run.data_root=DIR) "
                               f"or {DATA_ROOT_ENV}")
        return load_file(path, id_prefix=name, source=name)

    return _Entry(f"ReSo release file <data root>/{relative}", build)


def _gsm8k_entry() -> _Entry:
    def build(_root: Path | None) -> list[Problem]:
        from reso.agents.defaults import default_replay_path

        # GSM8K's answers are integers: graded exactly, like the composites built from them.
        return [dataclasses.replace(problem, rel_tol=EXACT_REL_TOL)
                for problem in load_file(default_replay_path(), source="gsm8k")]

    return _Entry("GSM8K test questions of the vendored replay file (reso.agents.defaults), graded exactly", build)


def _gsm8k_mas_entry(name: str, level: str, split: Split) -> _Entry:
    size, count = GSM8K_MAS_SIZES[level], GSM8K_MAS_ITEMS[split]

    def build(_root: Path | None) -> list[Problem]:
        from reso.agents.defaults import default_replay_path
        from reso.evals.synth.gsm8k import build_gsm8k_mas

        items = build_gsm8k_mas(default_replay_path(), size=size, n=count, seed=GSM8K_MAS_SEED, split=split,
                                id_prefix=name)
        return _release_problems(name, items)

    return _Entry(f"GSM8K-MAS {level} {split} split: {count} items of {size} replayed GSM8K questions "
                  f"(seed {GSM8K_MAS_SEED}), built from the vendored replay file", build)


def _linked_mas_entry(name: str, file_name: str, level: str, split: Split) -> _Entry:
    size, count = GSM8K_MAS_SIZES[level], GSM8K_MAS_ITEMS[split]

    def build(_root: Path | None) -> list[Problem]:
        from reso.agents.defaults import data_dir
        from reso.evals.synth.questions import build_linked_mas

        path = data_dir() / file_name
        if not path.is_file():
            raise DatasetError(f"dataset {name!r} needs the vendored recordings {file_name} in the package data "
                               f"folder {data_dir()}, but {path} does not exist")
        built = build_linked_mas(path, size=size, n=count, seed=GSM8K_MAS_SEED, split=split, id_prefix=name)
        return _release_problems(name, built.items)

    return _Entry(f"linked MAS {level} {split} split: {count} items of {size} linked questions (seed "
                  f"{GSM8K_MAS_SEED}), built from the vendored {file_name}", build)


def _release_problems(name: str, items: list[dict]) -> list[Problem]:
    from reso.evals.datasets.loaders import release_problem
    from reso.evals.datasets.raw_records import Record

    return [release_problem(Record(item, f"{name}: item {index}", index), id_prefix=name, source=name)
            for index, item in enumerate(items)]


for _name, _relative in RELEASE_FILES.items():
    _REGISTRY[_name] = _release_entry(_name, _relative)
_REGISTRY["gsm8k"] = _gsm8k_entry()
for _level in GSM8K_MAS_SIZES:
    for _split in GSM8K_MAS_ITEMS:
        _REGISTRY[f"gsm8k-mas-{_level}-{_split}"] = _gsm8k_mas_entry(f"gsm8k-mas-{_level}-{_split}", _level, _split)
        for _base, _file in LINKED_MAS_FILES.items():
            _REGISTRY[f"{_base}-{_level}-{_split}"] = _linked_mas_entry(f"{_base}-{_level}-{_split}", _file, _level,
                                                                        _split)
