"""`reso bench routing`: how fast each selection policy learns to route subtasks to the best agent.

Simulated agents succeed with given probabilities (reward 1 with probability p, else 0), optionally per
subtask domain. A stream of subtasks (each with a domain drawn uniformly when domains are given) is
routed by three policies, each with its own fresh in-memory DADB:

- `ucb`: the real `UCBSelector` with its default weights (k = 1);
- `greedy`: the same selector with `exploration_c = 0` (best smoothed mean so far, no exploration bonus);
- `random`: `RandomSelector`, the paper's ablation.

Similarity is uninformative: every profile vector equals the query, so every agent has cosine 1 and the
same gate, and `top_m` is the pool size so retrieval keeps everyone. With domains, the UCB and greedy
selectors score with per-(agent, domain) statistics. Costs are zero for every agent. All policies see the
same random numbers (one uniform draw per subtask and agent), so differences come from the policies.

Regret of a pick = p(best agent for the subtask's domain) - p(chosen agent); the report gives the
cumulative expected regret after T subtasks and the share of picks that went to a best agent.

Probability files: JSON `{"agent": p}` or `{"agent": {"domain": p}}`, or CSV with the columns
`agent,probability` or `agent,domain,probability`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reso.agents.dadb import DADB
from reso.agents.embeddings import HashEmbedder
from reso.agents.index import ProfileIndex
from reso.agents.selector import RandomSelector, SelectorConfig, UCBSelector
from reso.evals.bench.selection import synthetic_pool

DEFAULT_AGENTS = 63
DEFAULT_LOW, DEFAULT_HIGH = 0.05, 0.95


@dataclass(frozen=True)
class Arms:
    """Success probabilities: rows are agents, columns are domains (one column `None` without domains)."""

    agent_ids: list[str]
    domains: list[str | None]
    probabilities: np.ndarray


def default_arms(count: int = DEFAULT_AGENTS, seed: int = 0, low: float = DEFAULT_LOW,
                 high: float = DEFAULT_HIGH) -> Arms:
    """`count` agents with probabilities drawn uniformly in [low, high], reproducibly from `seed`."""
    if not 0.0 <= low <= high <= 1.0:
        raise ValueError(f"need 0 <= low <= high <= 1, got low={low}, high={high}")
    probabilities = np.random.default_rng(seed).uniform(low, high, size=(count, 1))
    return Arms([f"agent-{i:06d}" for i in range(count)], [None], probabilities)


def _probability(value: Any, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: probability must be a number, got {value!r}") from None
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{where}: probability must be in [0, 1], got {number}")
    return number


def _arms_from_table(table: dict[str, dict[str | None, float]], source: Path) -> Arms:
    if not table:
        raise ValueError(f"{source}: no agents")
    domain_sets = {agent: set(by_domain) for agent, by_domain in table.items()}
    domains = sorted({d for ds in domain_sets.values() for d in ds}, key=lambda d: (d is not None, d or ""))
    if None in domains and len(domains) > 1:
        raise ValueError(f"{source}: mix of agents with and without domains; give every agent the same domains")
    for agent, seen in domain_sets.items():
        missing = [d for d in domains if d not in seen]
        if missing:
            raise ValueError(f"{source}: agent {agent!r} has no probability for domain(s) {missing}")
    probabilities = np.array([[table[agent][d] for d in domains] for agent in table], dtype=np.float64)
    return Arms(list(table), list(domains), probabilities)


def load_arms(path: str | Path) -> Arms:
    """Read agent success probabilities from a JSON or CSV file (see the module docstring).

    Raises:
        ValueError: Unreadable file, a bad probability, or an agent missing a domain; the file, line or
            field is named.
    """
    source = Path(path)
    if not source.is_file():
        raise ValueError(f"{source}: probability file not found")
    table: dict[str, dict[str | None, float]] = {}
    if source.suffix.lower() == ".csv":
        with source.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            fields = set(reader.fieldnames or [])
            if not {"agent", "probability"} <= fields:
                raise ValueError(f"{source}:1: CSV needs the columns 'agent' and 'probability' (and optional 'domain')")
            for line, row in enumerate(reader, start=2):
                agent = (row.get("agent") or "").strip()
                if not agent:
                    raise ValueError(f"{source}:{line}: empty 'agent'")
                domain = (row.get("domain") or "").strip() or None
                table.setdefault(agent, {})[domain] = _probability(row["probability"], f"{source}:{line}: 'probability'")
        return _arms_from_table(table, source)
    try:
        document = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{source}:{error.lineno}: invalid JSON: {error.msg}") from None
    if not isinstance(document, dict):
        raise ValueError(  # noqa: TRY004 - bad file content, reported like every other file error
            f"{source}: expected a JSON object of agent -> probability (or domain -> probability)"
        )
    for agent, value in document.items():
        if isinstance(value, dict):
            table[agent] = {str(d): _probability(p, f"{source}: field '{agent}.{d}'") for d, p in value.items()}
        else:
            table[agent] = {None: _probability(value, f"{source}: field '{agent}'")}
    return _arms_from_table(table, source)


def _selectors(arms: Arms, seed: int, exploration_c: float | None = None) -> dict[str, Any]:
    pool = synthetic_pool(len(arms.agent_ids), price_in=0.0, price_out=0.0)
    ids = pool.ids
    # Every profile vector equals the query: similarity says nothing, the statistics decide.
    index = ProfileIndex.build(ids, np.ones((len(ids), 2), dtype=np.float32))
    per_domain = arms.domains != [None]
    embedder = HashEmbedder(8)

    def ucb(**overrides: Any) -> UCBSelector:
        config = SelectorConfig(top_m=len(ids), k=1, seed=seed, per_domain=per_domain, **overrides)
        return UCBSelector(pool, DADB(), embedder, config, index=index)

    return {
        "ucb": ucb() if exploration_c is None else ucb(exploration_c=exploration_c),
        "greedy": ucb(exploration_c=0.0),
        "random": RandomSelector(pool, DADB(), embedder, SelectorConfig(k=1, seed=seed)),
    }


def simulate(arms: Arms, subtasks: int = 2000, seed: int = 0, exploration_c: float | None = None) -> dict[str, Any]:
    """Run every policy over the same stream; returns per-policy summaries and cumulative regret curves.

    `exploration_c` overrides the UCB policy's exploration constant (None: the selector's default).
    """
    rng = np.random.default_rng(seed)
    n_agents, n_domains = arms.probabilities.shape
    stream = rng.integers(0, n_domains, size=subtasks)
    draws = rng.random((subtasks, n_agents))
    best = arms.probabilities.max(axis=0)
    query = np.ones(2, dtype=np.float32)
    policies: dict[str, Any] = {}
    curves: dict[str, list[float]] = {}
    selectors = _selectors(arms, seed, exploration_c)
    position = {agent_id: i for i, agent_id in enumerate(selectors["ucb"].pool.ids)}
    for name, selector in selectors.items():
        regret = np.zeros(subtasks)
        best_picks = 0
        for t, d in enumerate(stream):
            domain = arms.domains[d]
            chosen = selector.select_vector(query, 1, domain=domain)[0].agent.id
            a = position[chosen]
            p = arms.probabilities[a, d]
            regret[t] = best[d] - p
            best_picks += bool(p >= best[d])
            selector.update(chosen, float(draws[t, a] < p), 0.0, 0, domain=domain)
        cumulative = np.cumsum(regret)
        policies[name] = {"regret": round(float(cumulative[-1]), 3), "best_pick_rate": round(best_picks / subtasks, 4)}
        curves[name] = cumulative.tolist()
    random_regret = policies["random"]["regret"]
    for summary in policies.values():
        summary["regret_vs_random"] = round(summary["regret"] / random_regret, 4) if random_regret > 0 else None
    return {"policies": policies, "curves": curves}


def save_plot(curves: dict[str, Sequence[float]], path: str | Path, title: str) -> None:
    """Cumulative regret of each policy against the number of subtasks, as a PNG (Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4.5))
    for name, curve in curves.items():
        axis.plot(np.arange(1, len(curve) + 1), curve, label=name)
    axis.set_xlabel("subtasks")
    axis.set_ylabel("cumulative expected regret")
    axis.set_title(title)
    axis.legend()
    axis.grid(alpha=0.3)
    figure.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def run_bench(probs: Path | None = None, subtasks: int = 2000, seed: int = 0, plot: Path | None = None,
              low: float = DEFAULT_LOW, high: float = DEFAULT_HIGH, agents: int = DEFAULT_AGENTS,
              exploration_c: float | None = None) -> dict[str, Any]:
    """Load or draw the agents, simulate, optionally plot; returns the JSON-ready report."""
    arms = load_arms(probs) if probs is not None else default_arms(agents, seed, low, high)
    outcome = simulate(arms, subtasks, seed, exploration_c)
    if plot is not None:
        save_plot(outcome["curves"], plot, f"routing over {len(arms.agent_ids)} simulated agents")
    policies = outcome["policies"]
    return {
        "benchmark": "routing",
        "subtasks": subtasks,
        "agents": len(arms.agent_ids),
        "domains": [d for d in arms.domains if d is not None],
        "source": str(probs) if probs is not None else f"uniform[{low}, {high}] seed {seed}",
        "seed": seed,
        "ucb_exploration_c": exploration_c if exploration_c is not None else SelectorConfig().exploration_c,
        "best_probability": [round(float(p), 4) for p in arms.probabilities.max(axis=0)],
        "mean_probability": [round(float(p), 4) for p in arms.probabilities.mean(axis=0)],
        "policies": policies,
        "target_ucb_regret_at_most_25pct_of_random": bool(policies["ucb"]["regret"] <= 0.25 * policies["random"]["regret"]),
        "plot": str(plot) if plot is not None else None,
    }


def run_seeds(seeds: Sequence[int], probs: Path | None = None, subtasks: int = 2000, plot: Path | None = None,
              low: float = DEFAULT_LOW, high: float = DEFAULT_HIGH, agents: int = DEFAULT_AGENTS,
              exploration_c: float | None = None) -> dict[str, Any]:
    """`run_bench` for several seeds (new probabilities per seed when drawn); means, worst cases, per-seed rows.

    The plot, when asked for, shows the first seed.
    """
    if not seeds:
        raise ValueError("give at least one seed")
    runs = [run_bench(probs, subtasks, seed, plot if i == 0 else None, low=low, high=high, agents=agents,
                      exploration_c=exploration_c) for i, seed in enumerate(seeds)]
    policies: dict[str, dict[str, float]] = {}
    for name in runs[0]["policies"]:
        rows = [run["policies"][name] for run in runs]
        ratios = [row["regret_vs_random"] for row in rows if row["regret_vs_random"] is not None]
        policies[name] = {
            "regret": round(float(np.mean([row["regret"] for row in rows])), 3),
            "best_pick_rate": round(float(np.mean([row["best_pick_rate"] for row in rows])), 4),
            "regret_vs_random": round(float(np.mean(ratios)), 4) if ratios else None,
            "regret_vs_random_worst": round(float(np.max(ratios)), 4) if ratios else None,
        }
    met = sum(run["target_ucb_regret_at_most_25pct_of_random"] for run in runs)
    return {
        "benchmark": "routing",
        "subtasks": subtasks,
        "agents": runs[0]["agents"],
        "domains": runs[0]["domains"],
        "source": str(probs) if probs is not None else f"uniform[{low}, {high}], drawn per seed",
        "seeds": list(seeds),
        "ucb_exploration_c": runs[0]["ucb_exploration_c"],
        "policies": policies,
        "target_met_seeds": met,
        "target_ucb_regret_at_most_25pct_of_random": met == len(runs),
        "per_seed": [{"seed": run["seed"], "policies": run["policies"]} for run in runs],
        "plot": str(plot) if plot is not None else None,
    }
