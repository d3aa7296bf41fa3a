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


def test_validation_chooses_the_stage_worth_most_at_the_value_of_a_right_answer():
    from reso.evals.jobs.fine_stages import FineStage
    from reso.evals.jobs.validation import worth_most

    def run(usd: float, right: int, of: int = 50) -> tuple[float, float]:
        return right / of, usd

    # At $0.05 a right answer: 30 of 50 for $0.50 is worth 0.6 × 0.05 − 0.01 = 0.020 a composite; 34 for $1.50
    # is 0.034 − 0.030 = 0.004; 29 for $0.10 is 0.029 − 0.002 = 0.027: the cheap one, though less accurate.
    runs = {FineStage.CRM: run(1.5, 34), FineStage.PEER: run(0.5, 30), FineStage.PEER_ON_RECORDS: run(0.1, 29),
            FineStage.JUDGE: run(0.6, 30)}
    stage, why = worth_most(runs, 0.05, 50)
    assert stage == FineStage.PEER_ON_RECORDS and why == "the most worth at $0.05 a right answer, net of its cost"
    # At $1 accuracy pays for its price; infinitely valuable answers read accuracy alone.
    assert worth_most(runs, 1.0, 50)[0] == FineStage.CRM
    assert worth_most(runs, float("inf"), 50)[0] == FineStage.CRM
    # Four more right answers for $0.001 more: the dearer one (a cheapest-unless-beyond-its-interval rule kept
    # the cheaper here).
    close = {FineStage.PEER: run(0.286, 44), FineStage.PEER_ON_RECORDS: run(0.285, 40)}
    assert worth_most(close, 0.05, 50)[0] == FineStage.PEER
    # A tie: the cheaper, then the stages' order.
    assert worth_most({FineStage.CRM: run(0.5, 30), FineStage.JUDGE: run(0.4, 30)}, float("inf"), 50)[0] == FineStage.JUDGE
    assert worth_most({stage: run(0.5, 30) for stage in FineStage}, 0.05, 50)[0] == FineStage.CRM
