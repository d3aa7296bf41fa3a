"""The offline main job: learn on GSM8K-MAS train, test against the baselines, print the table.

1. ReSo in training mode on the train split: rule rewards update the DADB, and every candidate's answer
   is kept as a labelled CRM record.
2. The small learned CRM is trained on those records (our own traces, nothing else).
3. On the test split, with the DADB frozen: ReSo (small CRM), the random-selection ablation, each recorded
   model alone, and the oracle.

The default pool replays real recorded GPT-4 and Mixtral answers, so this runs anywhere without a key;
`--pool` points the same job at real endpoints.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reso.evals.datasets import load_dataset
from reso.evals.methods import parse_method
from reso.evals.report import write_run_report, write_sweep_report
from reso.evals.runner import EvalConfig, run_eval
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import team_for


@dataclass(frozen=True)
class DemoConfig:
    out: Path
    level: str = "easy"
    pool: str = ""
    concurrency: int = 16
    seed: int = 0
    train_limit: int | None = None
    test_limit: int | None = None
    training_scorer: str = "consensus"


def baseline_agents(pool: Any) -> list[str]:
    """One agent per distinct recorded/LLM model: the single-model baselines."""
    seen: dict[str, str] = {}
    for agent in pool:
        if agent.kind == "llm":
            seen.setdefault(agent.model.spec, agent.id)
    return list(seen.values())


def _run(config: DemoConfig, dataset: str, method: str, run_dir: Path, settings: ReSoSettings,
         limit: int | None, log: Callable[[str], None]) -> dict[str, Any]:
    problems = load_dataset(dataset, limit=limit)
    team = team_for(settings)
    log(f"{method} on {dataset} ({settings.mode}, {len(problems)} items) → {run_dir}")
    eval_config = EvalConfig(dataset=dataset, method=parse_method(method, team.pool), out=run_dir,
                             settings=settings, concurrency=config.concurrency)
    summary = asyncio.run(run_eval(eval_config, problems, team))
    write_run_report(run_dir)
    return summary


def train_crm(records_path: Path, out_dir: Path) -> Path:
    """Fit the small CRM on a training run's labelled records."""
    from reso.reward.records import load_records
    from reso.reward.small_crm import SmallCRM

    return SmallCRM().fit(load_records(records_path)).save(out_dir)


def run_demo(config: DemoConfig, log: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """Run the whole job and return the test summaries (ReSo first)."""
    out = config.out
    base = ReSoSettings(pool=config.pool, seed=config.seed, db=str(out / "dadb.sqlite"))
    train_set, test_set = f"gsm8k-mas-{config.level}-train", f"gsm8k-mas-{config.level}-test"
    train_settings = base.replace(mode="train", scorer=config.training_scorer)
    _run(config, train_set, "reso", out / "train-reso", train_settings, config.train_limit, log)
    crm_dir = train_crm(out / "train-reso" / "crm_records.jsonl", out / "crm")
    log(f"small CRM trained on the training run's records → {crm_dir}")
    test = base.replace(mode="test", scorer=f"small:{crm_dir}")
    pool = team_for(test).pool
    methods = ["reso", "random", *(f"single:{agent}" for agent in baseline_agents(pool)), "oracle"]
    summaries = []
    for method in methods:
        folder = out / f"test-{method.replace(':', '-').replace('/', '-')}"
        summaries.append(_run(config, test_set, method, folder, test, config.test_limit, log))
    write_sweep_report(out)
    return summaries


def comparison_rows(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Table rows with cost relative to the most accurate single-model baseline."""
    singles = [s for s in summaries if s["method"].startswith("single:")]
    anchor = max(singles, key=lambda s: s["accuracy"]) if singles else None
    rows = []
    for s in summaries:
        ratio = s["cost_usd"] / anchor["cost_usd"] if anchor and anchor["cost_usd"] else None
        rows.append({"method": s["method"], "n": s["n"], "accuracy": s["accuracy"],
                     "tokens_per_item": s["tokens_per_item"], "cost_usd": s["cost_usd"],
                     "cost_vs_best_single": ratio})
    return rows


def write_comparison(out: Path, rows: list[dict[str, Any]]) -> Path:
    path = out / "comparison.json"
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return path
