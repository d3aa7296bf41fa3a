"""Optional LLM-written target expert profile for the coarse stage, as the paper does it.

By default the selector embeds the subtask text itself (no extra model call). The paper instead asks a
model to describe the ideal expert for the subtask and embeds that description, which reads like the
agents' own profiles. `TargetProfileWriter` produces such a description with any LangChain chat model,
remembering the answer per subtask text; pass its output to `ReputationSelector.select` in place of the subtask.
"""

from __future__ import annotations

import asyncio

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

TARGET_PROFILE_INSTRUCTIONS = (
    "You help route work inside a team of expert agents. Read the subtask and describe, in one or two "
    "sentences, the expert best placed to solve it: the field, the specific topics and techniques it needs, "
    "and whether it is mostly calculation, derivation or modelling. Write the description in the form "
    "'<Field>: <topics and skills>.' and output nothing else."
)


class TargetProfileWriter:
    """Writes (and remembers) a target expert profile per subtask with a chat model."""

    def __init__(self, model: BaseChatModel, instructions: str = TARGET_PROFILE_INSTRUCTIONS) -> None:
        self.model = model
        self.instructions = instructions
        self._written: dict[str, str] = {}
        self._lock = asyncio.Lock()

    def _messages(self, subtask: str) -> list[SystemMessage | HumanMessage]:
        return [SystemMessage(content=self.instructions), HumanMessage(content=f"Subtask: {subtask}")]

    @staticmethod
    def _text(reply: object, subtask: str) -> str:
        text = getattr(reply, "text", None)
        content = text if isinstance(text, str) else str(getattr(reply, "content", ""))
        content = content.strip()
        if not content:
            raise ValueError(f"the model wrote an empty target profile for subtask {subtask[:80]!r}")
        return content

    def write(self, subtask: str) -> str:
        """The target profile for `subtask` (one model call the first time, then remembered).

        Raises:
            ValueError: The model answered with empty text.
        """
        if subtask not in self._written:
            self._written[subtask] = self._text(self.model.invoke(self._messages(subtask)), subtask)
        return self._written[subtask]

    async def awrite(self, subtask: str) -> str:
        """Async `write`; concurrent calls for the same subtask share one model call."""
        async with self._lock:
            if subtask not in self._written:
                reply = await self.model.ainvoke(self._messages(subtask))
                self._written[subtask] = self._text(reply, subtask)
            return self._written[subtask]
