"""The peer fine stage: pairwise error statistics, the peer posterior over distinct answers, and the
"diverse" escalation that asks the peer whose mistakes go least with those already asked."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from reso.agents.pool import pool_from_dict
from reso.agents.selection.selector import Candidate
from reso.graphs.escalation import Adaptive, Asked, AskingConfig, PricedAsking, policy_for
from reso.graphs.settings import ReSoSettings
from reso.reward.base import Score, ScoreItem, Scorer
from reso.reward.labelled_records import LabelledRecord
from reso.reward.peer_errors import PeerErrors
from reso.reward.peer_posterior import PeerPosteriorScorer, peer_errors
from reso.reward.training.peer_posterior_fit import fit_peer_posterior
from tests.selector_helpers import scored_terms


def _records(table: dict[str, Sequence[tuple[str, int]]]) -> list[LabelledRecord]:
    """Labelled answers: model → one (answer, label) per question q0, q1, …"""
    return [LabelledRecord(instruction=f"q{q}", answer=f"\\boxed{{{answer}}}", label=label, model=model,
                           question_id=f"q{q}")
            for model, answers in table.items() for q, (answer, label) in enumerate(answers)]


# Twins fail together, on the same wrong value; the loner fails on other questions.
TABLE = {
    "twin-a": [("1", 1), ("9", 0), ("9", 0), ("1", 1), ("1", 1), ("1", 1)],
    "twin-b": [("1", 1), ("9", 0), ("9", 0), ("1", 1), ("1", 1), ("1", 1)],
    "loner": [("7", 0), ("1", 1), ("1", 1), ("8", 0), ("1", 1), ("1", 1)],
}


def test_pairs_are_counted_on_shared_questions_and_shrunk_towards_the_pool():
    errors = PeerErrors.fit(_records(TABLE))
    twins = errors.pairs[PeerErrors.pair_key("twin-a", "twin-b")]
    assert (twins.both, twins.wrong_a, twins.wrong_b, twins.wrong_together, twins.same_wrong) == (6, 2, 2, 2, 2)
    apart = errors.pairs[PeerErrors.pair_key("twin-a", "loner")]
    assert (apart.wrong_together, apart.wrong_both, apart.same_wrong) == (0, 0, 0)
    # Twins' wrong answers always coincide: 2 of 2, shrunk with 5 pseudo-questions at the pooled 2 of 2.
    assert errors.coincidence("twin-a", "twin-b") == pytest.approx(0.9)  # the upper bound
    assert errors.correlation("twin-a", "twin-b") > 0.4 > 0 > errors.correlation("twin-a", "loner")
    assert errors.correlation("twin-a", "twin-a") == 1.0
    # An agreement of twins tells less than an independent model's; the loner's tells more (it is right
    # exactly where the twins are wrong).
    assert errors.dependence("twin-a", "twin-b") > 0 > errors.dependence("twin-a", "loner")
    assert errors.dependence("unknown", "twin-a") == 0.0


def test_the_table_saves_and_loads(tmp_path):
    errors = PeerErrors.fit(_records(TABLE))
    errors.save(tmp_path)
    again = PeerErrors.load(tmp_path)
    assert again.pairs == errors.pairs
    (tmp_path / "peer_errors.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="peer_errors.json: not a peer-error table"):
        PeerErrors.load(tmp_path)


class _Fixed(Scorer):
    """A base CRM that scores each answer alone by its model; it records the groups it was shown."""

    blocking = False

    def __init__(self, by_model: dict[str, float]) -> None:
        self.by_model = by_model
        self.groups: list[str | None] = []

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        self.groups += [item.group for item in items]
        return [Score(self.by_model[item.model or ""]) for item in items]


def _item(model: str, answer: str) -> ScoreItem:
    return ScoreItem(subtask="s", answer=f"\\boxed{{{answer}}}", model=model, group="g")


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def test_the_posterior_weighs_agreement_by_how_independent_the_agreeing_models_are():
    base = _Fixed({"twin-a": 0.6, "twin-b": 0.6, "loner": 0.6, "other": 0.6})
    scorer = PeerPosteriorScorer(base=base, errors=PeerErrors.fit(_records(TABLE)))
    twins = scorer.score([_item("twin-a", "4"), _item("twin-b", "4"), _item("other", "5")])
    mixed = scorer.score([_item("twin-a", "4"), _item("loner", "4"), _item("other", "5")])
    # The same two-against-one split; agreeing twins are weaker evidence than agreeing independents.
    assert twins[0] == twins[1] and mixed[0] == mixed[1]
    assert mixed[0] > twins[0] > twins[2]
    errors = scorer.errors
    expected = (_logit(0.6) + _logit(0.6) - errors.dependence("twin-a", "loner")
                + math.log(1 / errors.coincidence("twin-a", "loner")))
    norm = 1 + math.exp(expected) + math.exp(_logit(0.6))
    assert mixed[0] == pytest.approx(math.exp(expected) / norm)
    # Each answer was judged alone by the base CRM (one group each), so agreement is counted once.
    assert set(base.groups) == {"g#alone0", "g#alone1", "g#alone2"}


def test_a_lone_answer_keeps_the_base_score_and_one_model_counts_once():
    base = _Fixed({"twin-a": 0.7, "loner": 0.4})
    scorer = PeerPosteriorScorer(base=base, errors=PeerErrors())
    assert scorer.score([_item("twin-a", "4")]) == [pytest.approx(0.7)]
    # Two roles of one model repeat one answer: the score is the lone answer's, not an agreement's.
    assert scorer.score([_item("twin-a", "4"), _item("twin-a", "4")]) == [pytest.approx(0.7)] * 2
    # An answer without a final value gets 0 and takes no part.
    scores = scorer.score([_item("twin-a", "4"), ScoreItem(subtask="s", answer="no idea", model="loner", group="g")])
    assert scores[1] == 0.0 and scores[0] == pytest.approx(0.7)


def test_a_fitted_posterior_saves_loads_and_gives_its_table_to_the_policy(tmp_path):
    scorer = fit_peer_posterior("reliability:0.2", _records(TABLE))
    scorer.save(tmp_path)
    loaded = PeerPosteriorScorer(tmp_path)
    assert loaded.base_spec == "reliability:0.2" and loaded.errors.pairs == scorer.errors.pairs
    assert peer_errors(loaded) is loaded.errors and peer_errors(loaded.base) is None
    policy = policy_for(AskingConfig(rule="confidence", k=2, k_max=4, confidence=0.8, escalate_to="diverse"),
                        errors=loaded.errors)
    assert isinstance(policy, Adaptive) and policy.errors is loaded.errors
    priced = policy_for(AskingConfig(rule="priced", k=2), errors=loaded.errors, answer_value_usd=0.01)
    assert isinstance(priced, PricedAsking) and priced.errors is loaded.errors


def _cand(name: str, reputation: float) -> Candidate:
    pool = pool_from_dict({"name": "peers", "agents": [
        {"id": name, "model": {"spec": f"fake:{name}", "price_in": 1.0, "price_out": 1.0}, "role": "Algebra",
         "profile": "Solves algebra."}]})
    return Candidate(pool.get(name), 1.0, scored_terms(reputation=reputation, visits=99))


def test_diverse_escalation_asks_the_least_correlated_peer_even_when_none_is_more_reliable():
    errors = PeerErrors.fit(_records(TABLE))
    cands = [_cand("twin-a", 0.6), _cand("twin-b", 0.6), _cand("loner", 0.58), _cand("weak", 0.2)]
    policy = Adaptive(confidence=0.9, k_max=3, escalate_to="diverse", errors=errors)
    # Nobody is more likely right than a 0.6 answer, so the earlier rules stop; among peers the loner,
    # whose mistakes are not the twin's, is asked before the twin listed ahead of it.
    assert Adaptive(confidence=0.9, k_max=3).more(cands, [Asked(0, "4", 0.6)]) == []
    assert policy.more(cands, [Asked(0, "4", 0.6)]) == [2]
    # A far weaker model is never a peer, however independent.
    assert policy.more(cands, [Asked(0, "4", 0.6), Asked(2, "5", 0.4)]) == [1]
    # Confident, or k_max reached: stop.
    assert policy.more(cands, [Asked(0, "4", 0.95)]) == []
    assert policy.more(cands, [Asked(0, "4", 0.5), Asked(2, "5", 0.4), Asked(1, "4", 0.6)]) == []
    # Without a table, the coarse stage's order decides among the peers.
    assert Adaptive(confidence=0.9, k_max=3, escalate_to="diverse").more(cands, [Asked(0, "4", 0.6)]) == [1]


def _priced(name: str, reputation: float, cost_penalty: float) -> Candidate:
    """A candidate as the coarse stage scores it: w_rep 2, so its penalty costs cost_penalty / 2 of a record."""
    base = _cand(name, reputation)
    return Candidate(base.agent, 1.0, scored_terms(reputation=reputation, visits=99, cost_penalty=cost_penalty))


def test_priced_diverse_escalation_weighs_a_peers_record_net_of_its_price():
    errors = PeerErrors.fit(_records(TABLE))
    policy = Adaptive(confidence=0.9, k_max=3, escalate_to="diverse-priced", errors=errors)
    blind = Adaptive(confidence=0.9, k_max=3, escalate_to="diverse", errors=errors)
    # The loner's mistakes are not the twin's, but it pays the full penalty (half a record, 0.5): net of
    # price it is about 0.07, far below the cheap twin's 0.59, so the cheap twin is the peer asked.
    dear_loner = [_priced("twin-a", 0.6, 0.01), _priced("twin-b", 0.6, 0.01), _priced("loner", 0.58, 1.0)]
    assert policy.more(dear_loner, [Asked(0, "4", 0.6)]) == [1]
    assert blind.more(dear_loner, [Asked(0, "4", 0.6)]) == [2]  # "diverse" itself stays price-blind
    # At a price within the margin (0.06 of a record), it is a peer again and, the least correlated, asked.
    close = [_priced("twin-a", 0.6, 0.01), _priced("twin-b", 0.6, 0.01), _priced("loner", 0.58, 0.12)]
    assert policy.more(close, [Asked(0, "4", 0.6)]) == [2]
    # A cheap model 0.2 below a dear one on record is no peer of it on record alone, but net of price it
    # is the best remaining (0.59 against 0.3).
    cheap_weak = [_priced("twin-a", 0.6, 0.01), _priced("twin-b", 0.8, 1.0), _priced("loner", 0.6, 0.02)]
    assert policy.more(cheap_weak, [Asked(0, "4", 0.6)]) == [2]
    assert blind.more(cheap_weak, [Asked(0, "4", 0.6)]) == [1]
    # The setting reaches the policy the engine builds.
    chosen = ReSoSettings().replace({"asking.escalate_to": "diverse-priced", "asking.rule": "confidence",
                                     "asking.k": 1, "asking.k_max": 3, "asking.confidence": 0.9}).asking
    assert chosen.escalate_to == "diverse-priced"
    assert policy_for(chosen, errors=errors).more(cheap_weak, [Asked(0, "4", 0.6)]) == [2]


def test_answers_agree_only_when_their_values_are_the_same():
    # 226 and 228 are within the checker's default 1 %, but the composites grade them apart: so must the vote.
    base = _Fixed({"twin-a": 0.6, "loner": 0.6})
    scorer = PeerPosteriorScorer(base=base, errors=PeerErrors())
    split = scorer.score([_item("twin-a", "228"), _item("loner", "226")])
    assert split[0] == split[1] == pytest.approx(math.exp(_logit(0.6)) / (1 + 2 * math.exp(_logit(0.6))))
    agree = scorer.score([_item("twin-a", "226"), _item("loner", "226.0")])
    assert agree[0] == agree[1] > 0.6
