"""What produced a results folder, so that a rerun into it resumes only the run that wrote it.

`reso eval` resumes from `DIR/results.jsonl`: items already there are skipped. Rows written under one method,
dataset, pool, scorer or answer-changing setting must not be reused under another, so the first run into a
folder records `DIR/provenance.json` (written atomically, under the results file's lock) and every rerun is
compared with it before any item runs. A difference is refused with one line naming each differing field
(old → new); the same values resume as before. The file holds:

- `method`: the method as given (`reso`, `single:MODEL`, …);
- `dataset`: the name as given (a file's path relative to the folder: `reso.evals.portable`), and `items`: a short content hash per item id, so a
  rerun with a larger `--limit` adds items while a dataset whose items changed is refused;
- `pool`: its name and a hash of its agents as loaded (ids, roles, prompts, model specs, prices, params;
  recorded models by their files' names and contents, wherever they are installed);
- `settings`: the settings that change answers (`reso.graphs.settings.ANSWER_SETTINGS`, after the method's
  overrides), by dotted key.

A folder that holds no rows yet takes the current run's provenance. To keep a folder's rows under new
settings regardless, delete its `provenance.json`: the next run records its own, with a note saying that the
rows already there were not checked.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
from collections.abc import Iterable, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError, field_validator

from reso.agents.dadb.url import is_postgres_url, without_credentials
from reso.agents.pool import Pool
from reso.agents.profiles import FILE_PROVIDERS
from reso.evals.datasets import Problem
from reso.evals.portable import portable_path, portable_text, portable_value
from reso.evals.results import ResultsFormatError
from reso.graphs.settings import ANSWER_SETTINGS, FORMER_NAMES, ReSoSettings

FILE_NAME = "provenance.json"
_HASHED_FILE_LIMIT = 64 << 20

# Settings renamed since folders were first written: the flat names before the settings were a tree
# (`FORMER_NAMES`), `ucb_variant`, and the `selection` value `ucb`. A folder recorded under the old names is read
# under the new ones, so it still resumes and a changed value is still refused.
_RENAMED_VALUES = {("selection.policy", "ucb"): "reputation"}
# Recorded as None by the flat settings, meaning "the variant's own": the tree records the resolved constant, so
# an old None says nothing to compare.
_UNRESOLVED = {"selection.exploration_c"}


class ProvenanceError(ResultsFormatError):
    """A results folder written by another run (or an unreadable provenance file): one line naming it."""


class PoolIdentity(BaseModel):
    name: str
    sha256: str

    def __str__(self) -> str:
        return f"{self.name!r} ({self.sha256[:8]})"


class Provenance(BaseModel):
    """What produced a results folder's rows."""

    method: str
    dataset: str
    pool: PoolIdentity
    settings: dict[str, Any]
    items: dict[str, str]
    note: str | None = None

    @field_validator("settings", mode="before")
    @classmethod
    def _current_names(cls, settings: Any) -> Any:
        """The recorded settings under this version's names."""
        if not isinstance(settings, dict):
            return settings
        current: dict[str, Any] = {}
        for name, value in settings.items():
            name = FORMER_NAMES.get(str(name), str(name))
            if value is None and name in _UNRESOLVED:
                continue
            current[name] = _RENAMED_VALUES.get((name, value), value) if isinstance(value, str) else value
        return current

    @classmethod
    def of_run(cls, *, method: str, dataset: str, settings: ReSoSettings, pool: Pool,
               problems: Sequence[Problem], out: Path) -> Provenance:
        """The provenance of a run of `method` on `problems` with these settings (the method's overrides
        applied), writing into `out`."""
        # Kinds as their plain names (a StrEnum's repr would show its class), as they are written to the file.
        every = settings.values()
        values = {name: _plain(every[name]) for name in ANSWER_SETTINGS}
        if is_postgres_url(values["db"]):  # the server and database, never a user's password
            values["db"] = without_credentials(values["db"])
        elif values["db"]:
            # Relative to the folder, so moving a sweep (its DADB inside or beside the runs) changes nothing.
            values["db"] = portable_path(Path(values["db"]).resolve(), out)
        # Paths (a dataset file, a scorer's or the skills' folder) likewise: none of this machine's.
        return cls(method=method, dataset=portable_text(dataset_name(dataset), out), pool=pool_identity(pool),
                   settings={name: portable_value(value, out) for name, value in values.items()},
                   items={problem.id: item_hash(problem) for problem in problems})

    def portable(self, folder: Path) -> Provenance:
        """This record with its paths written as `of_run` writes them now (`reso.evals.portable`): a folder
        recorded by an earlier version, with absolute paths, is compared as if recorded now."""
        return self.model_copy(update={
            "dataset": portable_text(self.dataset, folder),
            "settings": {name: value if name == "db" else portable_value(value, folder)
                         for name, value in self.settings.items()}})

    def differences(self, old: Provenance) -> list[str]:
        """Each field that differs from `old`, as `field old → new`; empty when this run may resume it."""
        diffs = []
        if self.method != old.method:
            diffs.append(f"method {old.method!r} → {self.method!r}")
        if self.dataset != old.dataset:
            diffs.append(f"dataset {old.dataset!r} → {self.dataset!r}")
        else:
            diffs += _item_differences(old.items, self.items)
        if self.pool.sha256 != old.pool.sha256:
            diffs.append(f"pool {old.pool} → {self.pool}")
        # Only settings both records name: a setting added to ANSWER_SETTINGS later leaves older folders usable.
        for name, after in self.settings.items():
            if name in old.settings and old.settings[name] != after:
                diffs.append(f"{name} {old.settings[name]!r} → {after!r}")
        return diffs

    def claim(self, folder: Path, *, rows: int) -> None:
        """Record this run in `folder`, or check that it is the run recorded there; `rows` is how many result
        rows the folder already holds. Call it while holding the folder's results lock.

        Raises:
            ProvenanceError: The folder's rows come from a run that differs; the message names each field.
        """
        path = folder / FILE_NAME
        if not path.exists():
            note = (f"recorded on resume: the {rows} row(s) already here were not checked (the folder had no "
                    f"{FILE_NAME})") if rows else None
            _write(path, self.model_copy(update={"note": note}))
            return
        old = read_provenance(path).portable(folder)
        if not rows:  # nothing written under the old settings: the folder is free to take new ones
            _write(path, self)
            return
        diffs = self.differences(old)
        if diffs:
            raise ProvenanceError(f"{folder}: holds {rows} result(s) of a different run ({'; '.join(diffs)}); "
                                  f"rerun with the same values to resume, or choose another --out (deleting "
                                  f"{path} keeps its rows regardless)")
        merged = {**old.items, **self.items}
        if merged != old.items:  # a larger --limit: remember the new items too
            _write(path, old.model_copy(update={"items": merged}))


def _plain(value: Any) -> Any:
    """A kind's plain name (`Variant.THOMPSON` → 'thompson'), an infinite amount as 'inf' (JSON has no
    infinity: written as null, it would read back as another value); any other value as it is."""
    if isinstance(value, Enum):
        return value.value
    return "inf" if isinstance(value, float) and math.isinf(value) else value


def _item_differences(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """The dataset's items that changed content, or no item in common with the recorded ones."""
    if old and new and not old.keys() & new.keys():
        return ["dataset items: none in common with the recorded ones"]
    changed = [item for item in new if item in old and old[item] != new[item]]
    if not changed:
        return []
    more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
    return [f"dataset item {changed[0]!r} changed content{more}"]


def dataset_name(dataset: str) -> str:
    """A dataset as compared across reruns: a file by its absolute path (reruns may start elsewhere), a
    registered name as given."""
    path = Path(dataset)
    return str(path.resolve()) if path.is_file() else dataset


def item_hash(problem: Problem) -> str:
    """A short hash of everything an item holds (question, answers, plan, metadata)."""
    # A shallow field mapping: `dataclasses.asdict` deep-copies every plan and meta first (7x slower).
    fields = {field.name: getattr(problem, field.name) for field in dataclasses.fields(problem)}
    text = json.dumps(fields, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def pool_identity(pool: Pool) -> PoolIdentity:
    """The pool's name and a hash of its agents as loaded, in order.

    A model read from files (`replay:`, `local:`) counts by its files' names and contents, not their paths:
    loading resolves them to absolute paths, so a reinstall or a moved checkout would otherwise be another
    pool, while a recording swapped for another under the same name is one."""
    return PoolIdentity(name=pool.name, sha256=_sha256(_portable(agent.model_dump(mode="json")) for agent in pool))


def _portable(agent: dict[str, Any]) -> dict[str, Any]:
    """An agent's dump with its model's file paths replaced by `name@fingerprint`."""
    model = agent.get("model") or {}
    provider, _, target = str(model.get("spec", "")).partition(":")
    if provider not in FILE_PROVIDERS:
        return agent
    files, sep, fragment = target.partition("#")
    portable = ",".join(_fingerprint(Path(name)) for name in files.split(","))
    return {**agent, "model": {**model, "spec": f"{provider}:{portable}{sep}{fragment}"}}


def _fingerprint(path: Path) -> str:
    """`name@digest`: the file's SHA-256 (its size for files over 64 MiB, a GGUF say, read at every run); a
    folder (a `local:` checkpoint) by its name alone; a path that is neither stays as given (loading has
    reported it)."""
    try:
        stat = path.stat()
    except OSError:
        return str(path)
    if not path.is_file():
        return path.name
    return f"{path.name}@{_digest(str(path), stat.st_size, stat.st_mtime_ns)}"


@functools.lru_cache(maxsize=64)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    if size > _HASHED_FILE_LIMIT:
        return f"size:{size}"
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def _sha256(values: Iterable[Any]) -> str:
    text = json.dumps(list(values), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_provenance(path: Path) -> Provenance:
    """A folder's recorded provenance.

    Raises:
        ProvenanceError: The file is not a provenance record; the message names the file and the field.
    """
    try:
        return Provenance.model_validate_json(path.read_bytes())
    except ValidationError as error:
        first = error.errors()[0]
        field = f"field '{'.'.join(str(part) for part in first['loc'])}': " if first["loc"] else ""
        raise ProvenanceError(f"{path}: {field}{first['msg']} (edited by hand? restore it, or delete it to keep "
                              "the folder's rows under this run's settings)") from None


def _write(path: Path, provenance: Provenance) -> None:
    """Write atomically: a reader sees the old file or the new one, never half of one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(provenance.model_dump_json(indent=2, exclude_none=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
