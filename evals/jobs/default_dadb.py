"""The trained agent database shipped for the default pool: made by the main job's training, reproducibly,
with its provenance.

`python -m reso.evals.jobs.default_dadb` runs the training stage of `reso demo` (the defaults: world `many`,
level easy, seed 0) on each of its benchmarks: the same roster (`benchmark_roster`), the same 200 training
composites and the same training settings (`reso.evals.jobs.demo.train`: three candidates a subtask, chosen on
skill alone, rule rewards, one question at a time, so nothing depends on timing). It then writes the two
benchmarks' training DADBs, summed row by row (visits, reward, cost and token sums per agent and domain), as one
DADB export (`AgentDatabase.export_json`'s format) with its provenance: the command, the pool file's and the
recordings' SHA-256, each benchmark's training composites (dataset, count, a hash of their contents), the
training settings and the code version. The result goes to `agents/data/zeroeval_dadb.json`
(`reso.agents.defaults.default_dadb_path`), which test runs on the default pool read when no `--db` is given
(`reso.agents.dadb.open.default_db`).

`--check` makes it again in a temporary folder and compares it with the shipped file (exit code 1 when
they differ); `--work DIR` keeps the training runs (and resumes them). A test
(`tests/unit_tests/test_default_dadb.py`) fails when the pool file or its recordings change without the
file being made again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reso.agents.dadb.base import Mode, export_document
from reso.agents.dadb.open import file_sha256
from reso.agents.dadb.sqlite import DADB
from reso.agents.dadb.stats import AgentStats
from reso.agents.defaults import default_dadb_path, default_pool_path
from reso.agents.pool import load_pool
from reso.agents.profiles import AgentKind, Provider

COMMAND = "python -m reso.evals.jobs.default_dadb"
WORLD = "many"


def pool_provenance(pool_file: Path) -> dict[str, Any]:
    """The pool file's name and SHA-256, and each replay file its models answer from, by name, with its SHA-256."""
    from reso.agents.adapters.replay import resolve_replay_path, split_replay_target

    files: dict[str, str] = {}
    for agent in load_pool(pool_file):
        if agent.kind == AgentKind.LLM and agent.model.provider == Provider.REPLAY:
            for name in split_replay_target(agent.model.target)[0]:
                path = resolve_replay_path(name)
                files.setdefault(path.name, file_sha256(path))
    return {"file": pool_file.name, "sha256": file_sha256(pool_file), "recordings": dict(sorted(files.items()))}


def code_version() -> dict[str, Any]:
    """The package's version, and the git commit of the checkout it runs from (with whether the checkout had
    changes not committed) when it is one."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        package = version("reso-langgraph")
    except PackageNotFoundError:
        package = "unknown"
    found: dict[str, Any] = {"package": package}
    root = Path(__file__).resolve().parents[2]

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True,
                              timeout=30).stdout.strip()

    try:
        found["commit"] = git("rev-parse", "HEAD")
        shipped = default_dadb_path().resolve()
        changed = [line[3:] for line in git("status", "--porcelain", "--untracked-files=no").splitlines()]
        found["uncommitted_changes"] = any((root / name).resolve() != shipped for name in changed)
    except (OSError, subprocess.SubprocessError):
        pass  # an installed package: its version says which
    return found


def merged_rows(dadbs: Sequence[Path]) -> list[AgentStats]:
    """The rows of the DADB files summed per (agent, domain), in `all_stats`' order (global rows first); the
    times of the last update are left out (0), so the same training gives the same file."""
    sums: dict[tuple[str | None, str], list[float]] = {}
    for path in dadbs:
        dadb = DADB(path, mode=Mode.TEST, create=False)
        try:
            for row in dadb.all_stats():
                total = sums.setdefault((row.domain, row.agent_id), [0, 0.0, 0.0, 0.0, 0])
                for i, value in enumerate((row.visits, row.reward_sum, row.reward_sq_sum, row.cost_sum,
                                           row.token_sum)):
                    total[i] += value
        finally:
            dadb.close()
    keys = sorted(sums, key=lambda key: (key[0] or "", key[1]))
    return [AgentStats(agent_id, visits=int(v[0]), reward_sum=v[1], reward_sq_sum=v[2], cost_sum=v[3],
                       token_sum=int(v[4]), domain=domain)
            for (domain, agent_id), v in ((key, sums[key]) for key in keys)]


def train_benchmarks(work: Path, *, train_limit: int | None = None,
                     log: Any = None) -> tuple[list[Path], list[dict[str, Any]], dict[str, Any]]:
    """Run the main job's training stage on each benchmark of its default world into `work/<benchmark>`: the
    training DADBs, what each benchmark trained on, and the training settings."""
    from reso.evals.jobs.config import WORLDS, DemoConfig
    from reso.evals.jobs.demo import prepare_benchmark, train
    from reso.evals.jobs.events import LogProgress
    from reso.evals.provenance import item_hash
    from reso.graphs.settings import ReSoSettings

    config = DemoConfig(out=work, world=WORLD, train_limit=train_limit)
    progress = LogProgress(log or (lambda line: print(line, file=sys.stderr)))
    dadbs: list[Path] = []
    benchmarks: list[dict[str, Any]] = []
    for benchmark in WORLDS[WORLD]:
        # As `reso demo` reads and trains each benchmark (its roster read off the whole training side).
        prepared = prepare_benchmark(config, benchmark, progress)
        train(config, prepared.base, prepared.train_set, prepared.train, prepared.out, progress, benchmark.title)
        dadbs.append(prepared.out / "dadb.sqlite")
        digest = hashlib.sha256(json.dumps({p.id: item_hash(p) for p in prepared.train}, sort_keys=True).encode())
        benchmarks.append({"benchmark": benchmark.stem, "dataset": prepared.train_set,
                           "composites": len(prepared.train), "composites_sha256": digest.hexdigest(),
                           "left_out": list(prepared.left_out)})
    training = {"world": WORLD, "level": config.level, "seed": config.seed, "train_limit": train_limit,
                "min_recorded": config.min_recorded, "scorer": config.training_scorer, "asking": "fixed",
                "k": config.training_k, "answer_value_usd": str(config.training_answer_value_usd),
                "exploration": config.training_exploration, "concurrency": config.training_concurrency,
                "embedder": ReSoSettings().selection.embedder}
    return dadbs, benchmarks, training


def build(target: Path, work: Path, *, train_limit: int | None = None, log: Any = None) -> dict[str, Any]:
    """Train (`train_benchmarks`) and write the DADB export with its provenance to `target`; the document."""
    dadbs, benchmarks, training = train_benchmarks(work, train_limit=train_limit, log=log)
    rows = merged_rows(dadbs)
    provenance = {
        "command": COMMAND + (f" --train-limit {train_limit}" if train_limit is not None else ""),
        "made_by": "the training stage of `reso demo` (reso.evals.jobs.demo.train) on each benchmark of the "
                   "default world, the benchmarks' training DADBs summed per agent and domain",
        "pool": pool_provenance(default_pool_path()),
        "benchmarks": benchmarks,
        "training": training,
        "code": code_version(),
    }
    document = export_document(rows, provenance=provenance)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return document


def read_provenance(path: Path | None = None) -> dict[str, Any]:
    """The provenance recorded in a DADB export made here (the shipped one by default)."""
    document = json.loads((path or default_dadb_path()).read_text(encoding="utf-8"))
    return dict(document.get("provenance") or {})


def _differences(made: dict[str, Any], shipped: dict[str, Any]) -> list[str]:
    """What differs between a DADB export made now and the shipped one (the code version aside)."""
    lines = []
    ours, theirs = dict(made["provenance"]), dict(shipped.get("provenance") or {})
    for key in sorted((set(ours) | set(theirs)) - {"code"}):
        if ours.get(key) != theirs.get(key):
            lines.append(f"provenance {key}: shipped {theirs.get(key)!r}, made now {ours.get(key)!r}")
    if made["stats"] != shipped.get("stats"):
        lines.append("the statistics differ")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=default_dadb_path(),
                        help="Where to write the DADB export (default: the packaged agents/data/zeroeval_dadb.json).")
    parser.add_argument("--work", type=Path, default=None,
                        help="Folder for the training runs, kept (a rerun resumes); default: a temporary one.")
    parser.add_argument("--train-limit", type=int, default=None,
                        help="Only the first N training composites a benchmark (a quick look; not for shipping).")
    parser.add_argument("--check", action="store_true",
                        help="Make it again in a temporary folder and compare with --out; exit code 1 if they differ.")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="reso-default-dadb-") as scratch:
        work = args.work or Path(scratch) / "work"
        target = Path(scratch) / "made.json" if args.check else args.out
        document = build(target, work, train_limit=args.train_limit)
        if args.check:
            differences = _differences(document, json.loads(args.out.read_text(encoding="utf-8")))
            for line in differences:
                print(line, file=sys.stderr)
            print(f"{args.out}: {'differs from' if differences else 'matches'} what the training makes now")
            return 1 if differences else 0
    visits = sum(row["visits"] for row in document["stats"] if row["domain"] is None)
    print(f"{args.out}: {len(document['stats'])} rows, {visits} visits")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
