"""The validation part of the training side: which composites it takes, and that the CRM validation fits
learns from no recorded answer to any of their questions."""

from __future__ import annotations

from reso.agents.defaults import zeroeval_pool_path
from reso.agents.pool import load_pool
from reso.evals.datasets import load_dataset
from reso.evals.jobs.config import DemoConfig
from reso.evals.jobs.crm_fit import training_answers
from reso.evals.jobs.validation import validation_part, validation_questions, without_questions
from reso.evals.reports.recordings import original_questions


def _key(text: str) -> str:
    return " ".join(text.split())


def test_validation_takes_the_last_quarter_of_the_training_composites():
    train = load_dataset("math-l5-mas-easy-train", limit=12)
    assert [p.id for p in validation_part(train)] == [p.id for p in train[-3:]]
    assert len(validation_part(train[:2])) == 1


def test_the_validation_crm_sees_no_answer_to_a_validation_question(tmp_path):
    train = load_dataset("math-l5-mas-easy-train", limit=40)
    part = validation_part(train)
    answers = training_answers(DemoConfig(out=tmp_path), load_pool(zeroeval_pool_path()))
    held = validation_questions(part)
    kept = without_questions(answers, held)
    originals = {_key(text) for problem in part for text in original_questions(problem).values()}
    # Every sub-question of the validation composites is a recorded training-side question with answers…
    assert originals and all(any(_key(a.instruction) == text for a in answers) for text in originals)
    # …and none of those answers is left for the validation CRM; the other questions' answers all are.
    assert not {_key(a.instruction) for a in kept} & originals
    assert len(kept) == sum(_key(a.instruction) not in originals for a in answers)
    assert 0 < len(kept) < len(answers)


def test_validation_keeps_the_cheapest_stage_unless_a_dearer_one_is_better_beyond_its_interval():
    from reso.evals.jobs.fine_stages import Stage
    from reso.evals.jobs.validation import StageRun, prefer_cheaper

    def run(usd: float, right: int, of: int = 50) -> StageRun:
        return StageRun(right / of, usd, tuple(i < right for i in range(of)))

    # Two more right answers in fifty: within the interval, so the cheapest stays.
    close = {Stage.CRM: run(0.9, 30), Stage.PEER: run(0.5, 28), Stage.PEER_ON_RECORDS: run(0.7, 29),
             Stage.JUDGE: run(0.6, 27)}
    assert prefer_cheaper(close)[0] == Stage.PEER
    # Fifteen more: beyond it; then the dearest must beat that one, not the cheapest.
    apart = {**close, Stage.PEER_ON_RECORDS: run(0.7, 43), Stage.CRM: run(0.9, 45)}
    assert prefer_cheaper(apart)[0] == Stage.PEER_ON_RECORDS
    assert prefer_cheaper({**apart, Stage.CRM: run(0.9, 50)})[0] == Stage.CRM
    # Equal costs: the stages' order decides.
    same = {stage: run(0.5, 30) for stage in Stage}
    assert prefer_cheaper(same)[0] == Stage.CRM
