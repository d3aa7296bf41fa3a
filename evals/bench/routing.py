"""`reso bench routing`: how fast each selection policy learns to route subtasks to the best agent.

Simulated agents succeed with given probabilities (reward 1 with probability p, else 0), optionally per
subtask domain. A stream of subtasks (each with a domain drawn uniformly when domains are given) is
routed by every selection policy, each with its own fresh in-memory DADB:

- one `ReputationSelector` (k = 1, default weights) per score variant: `thompson`, `kl-ucb`, `moss`, `normalized`,
  `paper`;
- `greedy`: the `normalized` selector with `exploration_c = 0` (best smoothed mean so far, no bonus);
- `random`: `RandomSelector`, the paper's ablation.

Similarity is uninformative: every profile vector equals the query, so every agent has cosine 1 and the
same gate, and `top_m` is the pool size so retrieval keeps everyone. With `roles` R > 1 (`--roles`), the
agents are models × R roles instead: each role's agents share one profile vector, a model's success rate is
the same in every role, a subtask's domain is a role and its query that role's profile, and retrieval asks
for the default top M, fewer than a role holds, so a policy must retrieve whole profiles to reach every model
(two extra rows: the default variant unpooled, and also with the plain top-M search). With domains, the selectors score
with per-(agent, domain) statistics. Costs are zero for every agent. All policies see the same random
numbers (one uniform draw per subtask and agent), so differences come from the policies.

Regret of a pick = p(best agent for the subtask's domain) - p(chosen agent); the report gives the
cumulative expected regret after T subtasks and the share of picks that went to a best agent. The target
is met when the default variant's (`SelectorConfig().variant`) regret is at most 25 % of random's.
`run_spreads` runs several success-rate spreads (`STANDARD_SPREADS`: wide, narrow, the paper's range)
over the same seeds in one call; the default variant was chosen by it.

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

from reso.agents.dadb.sqlite import DADB
from reso.agents.selection.config import SelectorConfig, Variant
from reso.agents.selection.embeddings import HashEmbedder
from reso.agents.selection.index import ProfileIndex
from reso.agents.selection.selector import RandomSelector, ReputationSelector
from reso.evals.bench.selection import synthetic_pool

DEFAULT_AGENTS = 63
DEFAULT_LOW, DEFAULT_HIGH = 0.05, 0.95
# Wide success rates, a narrow band (the realistic case: most agents between 0.2 and 0.7), the paper's range.
STANDARD_SPREADS: tuple[tuple[float, float], ...] = ((0.05, 0.95), (0.2, 0.7), (0.0, 0.7))
TARGET_SHARE = 0.25
_REWARD_STREAM, _POLICY_STREAM = 1, 2
# The default variant's ablations on shared-profile pools: records kept per agent and domain only, and the
# top-M search that breaks a tie by the agents' order in the index (the coarse stage before either).
UNPOOLED, PLAIN_TOP_M = "default, unpooled", "default, plain top-M, unpooled"


@dataclass(frozen=True)
class Arms:
    """Success probabilities: rows are agents, columns are domains (one column `None` without domains).

    `roles` > 1 marks a shared-profile pool (`shared_profile_arms`): the agents are models × roles, model-major,
    each role's agents share one profile vector, and domain d's subtasks match role d's profile."""

    agent_ids: list[str]
    domains: list[str | None]
    probabilities: np.ndarray
    roles: int = 1


def shared_profile_arms(models: int, roles: int, seed: int = 0, low: float = DEFAULT_LOW,
                        high: float = DEFAULT_HIGH) -> Arms:
    """`models` models in `roles` roles: each model's success probability is drawn uniformly in [low, high]
    and is the same in every role and domain, so the profiles (one per role) say nothing about skill; a
    subtask of domain d matches role d's profile, and only the DADB's record tells the models apart."""
    if roles < 2:
        raise ValueError(f"a shared-profile pool needs at least two roles, got {roles}")
    skill = default_arms(models, seed, low, high).probabilities[:, 0]
    probabilities = np.repeat(np.repeat(skill[:, None], roles, axis=0), roles, axis=1)
    ids = [f"model-{m:04d}/role-{r}" for m in range(models) for r in range(roles)]
    return Arms(ids, [f"role-{r}" for r in range(roles)], probabilities, roles)


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


def _policy_seed(seed: int) -> int:
    """The selectors' seed for a run: independent of the probabilities' and the rewards' streams."""
    return int(np.random.SeedSequence([seed, _POLICY_STREAM]).generate_state(1)[0])


def default_policy() -> str:
    """The policy the target is judged on: the selector's default score variant."""
    return SelectorConfig().variant


def _queries(arms: Arms) -> np.ndarray:
    """The query vector of each domain's subtasks: its role's profile (shared profiles), else one vector
    every profile equals."""
    if arms.roles > 1:
        return np.eye(arms.roles, dtype=np.float32)
    return np.ones((len(arms.domains), 2), dtype=np.float32)


def _selectors(arms: Arms, seed: int, exploration_c: float | None = None,
               only: Sequence[str] | None = None) -> dict[str, Any]:
    pool = synthetic_pool(len(arms.agent_ids), price_in=0.0, price_out=0.0, roles=arms.roles)
    ids = pool.ids
    if arms.roles > 1:
        # Each role's agents share its profile; retrieval asks for the default top M, fewer than a role holds.
        index = ProfileIndex.build(ids, np.tile(_queries(arms), (len(ids) // arms.roles, 1)))
        top_m = SelectorConfig().top_m
    else:
        # Every profile vector equals the query: similarity says nothing, the statistics decide.
        index = ProfileIndex.build(ids, np.ones((len(ids), 2), dtype=np.float32))
        top_m = len(ids)
    per_domain = arms.domains != [None]
    embedder = HashEmbedder(8)

    def selector(**overrides: Any) -> ReputationSelector:
        config = SelectorConfig(top_m=top_m, per_domain=per_domain, **overrides)
        return ReputationSelector(pool, DADB(), embedder, config, index=index, seed=seed)

    tuned = {} if exploration_c is None else {"exploration_c": exploration_c}
    makers: dict[str, Any] = {
        **{variant: (lambda v=variant: selector(variant=v, **tuned)) for variant in Variant},
        "greedy": lambda: selector(variant=Variant.NORMALIZED, exploration_c=0.0),
        "random": lambda: RandomSelector(pool, DADB(), embedder, seed=seed),
    }
    if arms.roles > 1:  # what each half of the shared-profile design adds, on the default variant
        alone = {"role_weight": 0.0, "domain_prior": 0.0}
        makers[UNPOOLED] = lambda: selector(**tuned, **alone)
        makers[PLAIN_TOP_M] = lambda: selector(**tuned, **alone, whole_profiles=False)
    unknown = sorted(set(only or ()) - set(makers))
    if unknown:
        raise ValueError(f"unknown policy(ies) {unknown}; choose from {', '.join(makers)}")
    # Random always runs: every other policy's regret is reported as a share of its regret.
    return {name: make() for name, make in makers.items() if only is None or name in only or name == "random"}


def simulate(arms: Arms, subtasks: int = 2000, seed: int = 0, exploration_c: float | None = None,
             only: Sequence[str] | None = None) -> dict[str, Any]:
    """Run every policy over the same stream; returns per-policy summaries and cumulative regret curves.

    `exploration_c` overrides every score variant's exploration constant (None: each variant's default);
    `only` names the policies to run (`random` always runs).
    """
    # Separate streams for the probabilities (`default_arms(seed)`), the rewards and the policies' own
    # draws: one shared stream made the first rewards equal the probabilities' uniforms and lined the
    # selectors' tie-breaking jitter up with the reward draws.
    rng = np.random.default_rng([seed, _REWARD_STREAM])
    n_agents, n_domains = arms.probabilities.shape
    stream = rng.integers(0, n_domains, size=subtasks)
    draws = rng.random((subtasks, n_agents))
    best = arms.probabilities.max(axis=0)
    queries = _queries(arms)
    policies: dict[str, Any] = {}
    curves: dict[str, list[float]] = {}
    selectors = _selectors(arms, _policy_seed(seed), exploration_c, only)
    position = {agent_id: i for i, agent_id in enumerate(selectors["random"].pool.ids)}
    for name, selector in selectors.items():
        regret = np.zeros(subtasks)
        best_picks = 0
        for t, d in enumerate(stream):
            domain = arms.domains[d]
            chosen = selector.select_vector(queries[d], 1, domain=domain)[0].agent.id
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


def _exploration(exploration_c: float | None) -> dict[str, float]:
    """Each score variant's exploration constant in this run."""
    return {variant: (exploration_c if exploration_c is not None else
                      float(SelectorConfig(variant=variant).exploration_c or 0.0)) for variant in Variant}


def draw_arms(agents: int, seed: int, low: float, high: float, roles: int = 1) -> Arms:
    """`agents` agents drawn in [low, high]: one model each, or (roles > 1) agents / roles models in `roles`
    shared-profile roles."""
    if roles <= 1:
        return default_arms(agents, seed, low, high)
    if agents % roles:
        raise ValueError(f"{agents} agents do not split into {roles} roles")
    return shared_profile_arms(agents // roles, roles, seed, low, high)


def run_bench(probs: Path | None = None, subtasks: int = 2000, seed: int = 0, plot: Path | None = None,
              low: float = DEFAULT_LOW, high: float = DEFAULT_HIGH, agents: int = DEFAULT_AGENTS,
              exploration_c: float | None = None, roles: int = 1) -> dict[str, Any]:
    """Load or draw the agents, simulate, optionally plot; returns the JSON-ready report."""
    arms = load_arms(probs) if probs is not None else draw_arms(agents, seed, low, high, roles)
    outcome = simulate(arms, subtasks, seed, exploration_c)
    if plot is not None:
        save_plot(outcome["curves"], plot, f"routing over {len(arms.agent_ids)} simulated agents")
    policies = outcome["policies"]
    default = default_policy()
    return {
        "benchmark": "routing",
        "subtasks": subtasks,
        "agents": len(arms.agent_ids),
        "roles": arms.roles,
        "domains": [d for d in arms.domains if d is not None],
        "source": str(probs) if probs is not None else f"uniform[{low}, {high}] seed {seed}",
        "seed": seed,
        "default_policy": default,
        "exploration_c": _exploration(exploration_c),
        "best_probability": [round(float(p), 4) for p in arms.probabilities.max(axis=0)],
        "mean_probability": [round(float(p), 4) for p in arms.probabilities.mean(axis=0)],
        "policies": policies,
        "target_default_regret_at_most_25pct_of_random": bool(
            policies[default]["regret"] <= TARGET_SHARE * policies["random"]["regret"]),
        "plot": str(plot) if plot is not None else None,
    }


def run_seeds(seeds: Sequence[int], probs: Path | None = None, subtasks: int = 2000, plot: Path | None = None,
              low: float = DEFAULT_LOW, high: float = DEFAULT_HIGH, agents: int = DEFAULT_AGENTS,
              exploration_c: float | None = None, roles: int = 1) -> dict[str, Any]:
    """`run_bench` for several seeds (new probabilities per seed when drawn); means, worst cases, per-seed rows.

    The plot, when asked for, shows the first seed. `target_met_seeds[policy]` counts the seeds on which
    that policy's regret is at most 25 % of random's.
    """
    if not seeds:
        raise ValueError("give at least one seed")
    runs = [run_bench(probs, subtasks, seed, plot if i == 0 else None, low=low, high=high, agents=agents,
                      exploration_c=exploration_c, roles=roles) for i, seed in enumerate(seeds)]
    policies: dict[str, dict[str, float | None]] = {}
    met: dict[str, int] = {}
    for name in runs[0]["policies"]:
        rows = [run["policies"][name] for run in runs]
        ratios = [row["regret_vs_random"] for row in rows if row["regret_vs_random"] is not None]
        policies[name] = {
            "regret": round(float(np.mean([row["regret"] for row in rows])), 3),
            "best_pick_rate": round(float(np.mean([row["best_pick_rate"] for row in rows])), 4),
            "regret_vs_random": round(float(np.mean(ratios)), 4) if ratios else None,
            "regret_vs_random_worst": round(float(np.max(ratios)), 4) if ratios else None,
        }
        met[name] = sum(row["regret"] <= TARGET_SHARE * run["policies"]["random"]["regret"]
                        for row, run in zip(rows, runs, strict=True))
    default = runs[0]["default_policy"]
    return {
        "benchmark": "routing",
        "subtasks": subtasks,
        "agents": runs[0]["agents"],
        "roles": runs[0]["roles"],
        "domains": runs[0]["domains"],
        "source": str(probs) if probs is not None else f"uniform[{low}, {high}], drawn per seed",
        "seeds": list(seeds),
        "default_policy": default,
        "exploration_c": runs[0]["exploration_c"],
        "policies": policies,
        "target_met_seeds": met,
        "target_default_regret_at_most_25pct_of_random": met[default] == len(runs),
        "per_seed": [{"seed": run["seed"], "policies": run["policies"]} for run in runs],
        "plot": str(plot) if plot is not None else None,
    }


def run_spreads(spreads: Sequence[tuple[float, float]], seeds: Sequence[int], subtasks: int = 2000,
                agents: int = DEFAULT_AGENTS, exploration_c: float | None = None, roles: int = 1) -> dict[str, Any]:
    """`run_seeds` for several success-rate spreads [low, high] in one report, policies side by side.

    `summary[policy]` lists, per spread, the mean and worst-seed regret as a share of random's.
    """
    if not spreads:
        raise ValueError("give at least one spread")
    rows = [run_seeds(seeds, None, subtasks, None, low=low, high=high, agents=agents, exploration_c=exploration_c,
                      roles=roles) for low, high in spreads]
    default = rows[0]["default_policy"]
    summary = {
        name: [{"spread": f"U[{low}, {high}]", "mean": row["policies"][name]["regret_vs_random"],
                "worst": row["policies"][name]["regret_vs_random_worst"],
                "seeds_meeting_target": row["target_met_seeds"][name]}
               for (low, high), row in zip(spreads, rows, strict=True)]
        for name in rows[0]["policies"]
    }
    return {
        "benchmark": "routing",
        "subtasks": subtasks,
        "agents": agents,
        "roles": roles,
        "seeds": list(seeds),
        "default_policy": default,
        "exploration_c": rows[0]["exploration_c"],
        "summary": summary,
        "target_default_regret_at_most_25pct_of_random": all(
            row["target_default_regret_at_most_25pct_of_random"] for row in rows),
        "spreads": [{"low": low, "high": high, **{k: v for k, v in row.items() if k not in ("benchmark", "plot")}}
                    for (low, high), row in zip(spreads, rows, strict=True)],
    }
