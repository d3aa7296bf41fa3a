"""The baselines the main job chooses from the training record: the votes of the best-recorded models and a
cascade whose cheap and strong models the record picks."""

from __future__ import annotations

from reso.evals.jobs.events import Log
from reso.evals.methods import MethodError, best_recorded, llm_agents, model_name
from reso.graphs.team import Team


def cascade_from_record(team: Team) -> str:
    """The cascade baseline chosen from the training record alone: the model with the best record answers
    last; first the two best-recorded models whose list price (mean of input and output) is at most a tenth
    of its price (when fewer are, the two best-recorded models cheaper than it)."""
    ranked = best_recorded(team, len(llm_agents(team.pool)))
    strong = team.agent(ranked[0])

    def price(agent_id: str) -> float:
        agent = team.agent(agent_id)
        return (agent.price_in + agent.price_out) / 2

    cheap = [a for a in ranked[1:] if price(a) <= price(strong.id) / 10][:2]
    if len(cheap) < 2:
        cheap = [a for a in ranked[1:] if price(a) < price(strong.id)][:2]
    if len(cheap) < 2:
        raise MethodError("a cascade needs three models: two cheap ones, then the strong one")
    return f"cascade:{','.join(model_name(team.agent(a)) for a in cheap)}>{model_name(strong)}"


def recorded_baselines(team: Team, log: Log) -> list[str]:
    """`vote:3`, `vote:5` (a pool of five models or more) and the cascade, all chosen from the training
    record; left out (with a note) when the pool has too few models or the DADB learned nothing."""
    methods = []
    try:
        best_recorded(team, 3)
        methods.append("vote:3")
        if len(llm_agents(team.pool)) >= 5:
            methods.append("vote:5")
        methods.append(cascade_from_record(team))
    except MethodError as error:
        log(f"baseline left out: {error}")
    return methods
