"""The optional LLM-written target profile: one call per subtask, and it steers the selector."""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from reso.agents.dadb.sqlite import DADB
from reso.agents.pool import pool_from_dict
from reso.agents.selection.config import SelectorConfig
from reso.agents.selection.embeddings import load_embedder
from reso.agents.selection.selector import ReputationSelector
from reso.agents.selection.target_profile import TargetProfileWriter


def _model(*replies: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(content=r) for r in replies]))


def test_profile_is_written_once_per_subtask_and_routes_the_selector() -> None:
    writer = TargetProfileWriter(_model("Geometry: triangles, circles and areas.", "Algebra: equations."))
    assert writer.write("What is the area of the triangle?") == "Geometry: triangles, circles and areas."
    assert writer.write("What is the area of the triangle?") == "Geometry: triangles, circles and areas."
    assert writer.write("Solve for x.") == "Algebra: equations."
    pool = pool_from_dict({"agents": [
        {"id": "alg", "model": {"spec": "tool:calculator"}, "role": "Algebra", "profile": "equations and polynomials"},
        {"id": "geo", "model": {"spec": "tool:calculator"}, "role": "Geometry", "profile": "triangles circles areas"},
    ]})
    selector = ReputationSelector(pool, DADB(), load_embedder("hash:64"), SelectorConfig(), seed=0)
    assert selector.select(writer.write("What is the area of the triangle?"), 1)[0].agent.id == "geo"


async def test_async_writer_shares_one_call_and_rejects_empty_text() -> None:
    writer = TargetProfileWriter(_model("Probability: counting and expectation.", "  "))
    assert await writer.awrite("Roll two dice.") == "Probability: counting and expectation."
    assert await writer.awrite("Roll two dice.") == "Probability: counting and expectation."
    with pytest.raises(ValueError, match="empty target profile"):
        await writer.awrite("Another subtask")
