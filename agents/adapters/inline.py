"""A chat-model base for agents whose answers cost no I/O (recorded answers, exact tools).

LangChain runs a model's synchronous `_generate` in a worker thread when the model has no `_agenerate`;
for a table lookup or a bounded calculation that hop costs more than the work, so these answer on the
event loop instead.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult


class InlineChatModel(BaseChatModel):
    """Answers `ainvoke` by calling `_generate` directly: subclasses must do no blocking I/O there."""

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop=stop, **kwargs)
