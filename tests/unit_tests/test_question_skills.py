"""Per-question skills (`reso.agents.selection.question_skills`): a model's record on the nearest past subtasks,
shrunk towards its pooled record, against hand counts; saved and loaded; read by the fine stage."""

from __future__ import annotations

import numpy as np
import pytest

from reso.agents.selection.embeddings import load_embedder
from reso.agents.selection.question_skills import QuestionSkills
from reso.agents.selection.selector import Candidate
from reso.graphs.fine_stage import _reliabilities
from tests.selector_helpers import priced_pool

EMBEDDER = load_embedder("hash:64")
GEOMETRY = [f"Find the area of triangle number {i} with the given sides." for i in range(6)]
ALGEBRA = [f"Solve the equation x^2 + {i}x = 12 for the positive root." for i in range(6)]


def _skills(**options) -> QuestionSkills:
    # "cheap" is right on every algebra question and wrong on every geometry one; "strong" right on both.
    texts, models, labels = [], [], []
    for text in GEOMETRY + ALGEBRA:
        for model, right in (("cheap", text in ALGEBRA), ("strong", True)):
            texts.append(text)
            models.append(model)
            labels.append(int(right))
    return QuestionSkills.fit(texts, models, labels, EMBEDDER, **options)


def test_a_models_chance_is_its_record_on_the_nearest_subtasks_shrunk_towards_its_pooled_record():
    skills = _skills(neighbours=3, prior=2.0)
    assert skills.models == ["cheap", "strong"] and skills.right.shape == (12, 2)
    # The three nearest to an algebra question are algebra questions: cheap 3 of 3, shrunk with 2 × 0.5.
    near_algebra = skills.estimate_text(ALGEBRA[0], {"cheap": 0.5, "strong": 0.9})
    assert near_algebra == pytest.approx({"cheap": (3 + 2 * 0.5) / (3 + 2), "strong": (3 + 2 * 0.9) / (3 + 2)})
    near_geometry = skills.estimate_text(GEOMETRY[0], {"cheap": 0.5, "strong": 0.9, "unseen": 0.3})
    assert near_geometry == pytest.approx({"cheap": (0 + 2 * 0.5) / 5, "strong": (3 + 2 * 0.9) / 5, "unseen": 0.3})


def test_answers_repeated_for_one_text_count_by_their_share_and_silent_models_by_nothing():
    skills = QuestionSkills.fit(["q1", "q1", "q1", "q2"], ["a", "a", "b", "b"], [1, 0, 1, 0], EMBEDDER)
    row = {text: i for i, text in enumerate(["q1", "q2"])}
    assert skills.right[row["q1"]].tolist() == [0.5, 1.0]
    assert np.isnan(skills.right[row["q2"], 0]) and skills.right[row["q2"], 1] == 0.0
    with pytest.raises(ValueError, match="no labelled answers"):
        QuestionSkills.fit([], [], [], EMBEDDER)


def test_skills_save_and_load_with_their_embedder(tmp_path):
    skills = _skills(neighbours=3, prior=2.0)
    skills.save(tmp_path / "skills")
    loaded = QuestionSkills.load(tmp_path / "skills")
    assert loaded.embedder is not None and loaded.embedder.name == EMBEDDER.name
    assert loaded.estimate_text(GEOMETRY[1], {"cheap": 0.5}) == pytest.approx(
        skills.estimate_text(GEOMETRY[1], {"cheap": 0.5}))
    with pytest.raises(ValueError, match="not a question-skills folder"):
        QuestionSkills.load(tmp_path / "nowhere")


class _Standings:
    def model_record(self, agent_id: str) -> tuple[float, int]:
        return {"cheap": (4.0, 8), "strong": (8.0, 8)}[agent_id]  # records (4 + 1) / 10, (8 + 1) / 10


def test_the_fine_stage_reads_the_chance_on_this_subtask():
    pool = priced_pool({"cheap": 0.1, "strong": 1.0})
    offered = [Candidate(pool.get("cheap"), 1.0), Candidate(pool.get("strong"), 1.0)]
    skills = _skills(neighbours=3, prior=2.0)  # models named as the pool's: openai:cheap is "cheap"
    assert _reliabilities(_Standings(), offered, None, GEOMETRY[0]) == pytest.approx([0.5, 0.9])  # type: ignore[arg-type]
    assert _reliabilities(_Standings(), offered, skills, GEOMETRY[0]) == pytest.approx(  # type: ignore[arg-type]
        [(0 + 2 * 0.5) / 5, (3 + 2 * 0.9) / 5])
    assert _reliabilities(None, offered, skills, GEOMETRY[0]) is None


def test_skills_fitted_with_the_bundled_minilm_load_it_by_its_spec(tmp_path):
    from reso.agents.selection.embeddings import MiniLMEmbedder, embedder_spec

    assert embedder_spec(MiniLMEmbedder.NAME) == "minilm" and embedder_spec("hash:64") == "hash:64"
    skills = _skills()
    skills.embedder_name = MiniLMEmbedder.NAME  # as the main job's, fitted with MiniLM
    skills.save(tmp_path / "skills")
    loaded = QuestionSkills.load(tmp_path / "skills")
    assert loaded.embedder is not None and loaded.embedder.name == MiniLMEmbedder.NAME


def test_concurrent_first_searches_all_read_the_whole_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sibling subtasks search from worker threads: a search that starts while the index is being built waits
    for it, rather than reading a half-built index and falling back to the pooled record."""
    import threading
    import time

    import faiss

    real_index = faiss.IndexFlatIP

    class SlowIndex:  # holds the index half-built long enough for the other thread to arrive
        def __init__(self, dim: int) -> None:
            self.inner = real_index(dim)

        def add(self, vectors: np.ndarray) -> None:
            time.sleep(0.3)
            self.inner.add(vectors)

        def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
            return self.inner.search(query, k)

    expected = _skills(neighbours=3, prior=2.0).estimate_text(ALGEBRA[0], {"cheap": 0.5, "strong": 0.9})
    monkeypatch.setattr(faiss, "IndexFlatIP", SlowIndex)
    skills = _skills(neighbours=3, prior=2.0)
    results: list[dict[str, float]] = []

    def search() -> None:
        results.append(skills.estimate_text(ALGEBRA[0], {"cheap": 0.5, "strong": 0.9}))

    threads = [threading.Thread(target=search) for _ in range(2)]
    threads[0].start()
    time.sleep(0.1)  # the first is building the index now
    threads[1].start()
    for thread in threads:
        thread.join()
    assert results == [expected, expected] and expected["cheap"] == pytest.approx((3 + 2 * 0.5) / 5)
