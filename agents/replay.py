"""Replay agents: chat models that answer with recorded outputs of real models, offline.

A replay file is JSONL, one question per line, in the layout of the vendored GSM8K recordings:
`{"id", "question", "answer", "responses": {model: text}, "correct": {model: bool}}`. A prompt is matched
to the recorded question it is about (its current subtask, see `reso.agents.prompting`); the model then
returns the recorded text of one model, with the token counts the original call would have used. A prompt
with no recording fails with `NoRecordingError`: a replay agent never invents an answer.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from reso.agents.defaults import fewshot_prefix_path
from reso.agents.inline import InlineChatModel
from reso.agents.prompting import current_subtask
from reso.agents.tokens import count_tokens


class ReplayError(ValueError):
    """A replay file or replay spec is invalid (bad line, unknown model); the message names the file."""


class NoRecordingError(LookupError):
    """The prompt is about a question that the replay file has no recording of."""


_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})


def normalise_question(text: str) -> str:
    """The matching form of a question: NFKC, straight quotes, single spaces, lower case."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    return re.sub(r"\s+", " ", text).strip().lower()


@dataclass(frozen=True, slots=True)
class Recording:
    """One recorded question: its id, text, reference answer and each model's recorded response."""

    id: str
    question: str
    answer: str | None
    responses: Mapping[str, str]
    correct: Mapping[str, bool] = field(default_factory=dict)


class ReplayTable:
    """The recordings of one replay file, indexed by normalised question text.

    Build it with `replay_table(path)`, which loads each file once per process and shares the index
    between every replay model of that file.
    """

    def __init__(self, path: Path, recordings: Sequence[Recording]) -> None:
        self.path = path
        self.recordings = list(recordings)
        self._exact: dict[str, Recording] = {}
        for recording in self.recordings:
            self._exact.setdefault(normalise_question(recording.question), recording)
        # Longest first, so the first contained question found is the most specific one.
        self._by_length = sorted(self._exact.items(), key=lambda item: len(item[0]), reverse=True)
        self.models: list[str] = sorted({name for rec in self.recordings for name in rec.responses})

    def __len__(self) -> int:
        return len(self.recordings)

    def find(self, text: str) -> Recording | None:
        """The recording that `text` is about: an exact match, else the longest recorded question it contains.

        Args:
            text: A question or subtask text (the caller cuts a full prompt to its current subtask).

        Returns:
            The matching recording, or None.
        """
        key = normalise_question(text)
        if not key:
            return None
        if key in self._exact:
            return self._exact[key]
        for question, recording in self._by_length:
            if question in key:
                return recording
        return None


def _parse_line(line: str, path: Path, lineno: int) -> Recording:
    where = f"{path}:{lineno}"
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise ReplayError(f"{where}: invalid JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise ReplayError(f"{where}: expected a JSON object, got {type(data).__name__}")
    for name in ("id", "question"):
        if not isinstance(data.get(name), str) or not data[name].strip():
            raise ReplayError(f"{where}: field '{name}' must be a non-empty string")
    responses = data.get("responses")
    if not isinstance(responses, dict) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in responses.items()
    ):
        raise ReplayError(f"{where}: field 'responses' must map model names to recorded texts")
    correct = data.get("correct") or {}
    if not isinstance(correct, dict) or not all(isinstance(value, bool) for value in correct.values()):
        raise ReplayError(f"{where}: field 'correct' must map model names to true/false")
    answer = data.get("answer")
    return Recording(
        id=data["id"],
        question=data["question"],
        answer=None if answer is None else str(answer),
        responses=responses,
        correct=correct,
    )


@lru_cache(maxsize=16)
def _load_table(resolved: str, mtime_ns: int) -> ReplayTable:
    path = Path(resolved)
    recordings: list[Recording] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            recording = _parse_line(line, path, lineno)
            if recording.id in seen:
                raise ReplayError(f"{path}:{lineno}: duplicate id {recording.id!r}")
            seen.add(recording.id)
            recordings.append(recording)
    if not recordings:
        raise ReplayError(f"{path}: the replay file has no recordings")
    return ReplayTable(path, recordings)


def replay_table(path: str | Path) -> ReplayTable:
    """Load (once per process, keyed by resolved path and modification time) the recordings of a file.

    Args:
        path: A replay JSONL file.

    Returns:
        The shared, indexed table of the file.

    Raises:
        ReplayError: The file is missing or a line is invalid (the message names file and line).
    """
    resolved = Path(path).expanduser().resolve()
    try:
        mtime_ns = resolved.stat().st_mtime_ns
    except FileNotFoundError:
        raise ReplayError(f"{resolved}: replay file not found") from None
    return _load_table(str(resolved), mtime_ns)


def replay_correctness(path: str | Path) -> dict[tuple[str, str], bool]:
    """The recorded correctness labels of a replay file, as (question id, model) → correct.

    Used by the oracle baseline: a question counts as solvable when any model's recording is correct.
    """
    table = replay_table(path)
    return {(rec.id, model): ok for rec in table.recordings for model, ok in rec.correct.items()}


def _unknown_model_message(table: ReplayTable, model_name: str) -> str:
    known = ", ".join(table.models)
    return f"{table.path}: no recordings for model {model_name!r}; the file's models are: {known}"


@lru_cache(maxsize=4)
def _prefix_text(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


@lru_cache(maxsize=8192)
def _prompt_tokens(prefix_path: str, question: str) -> int:
    """Tokens of the prompt a recording was made with: the few-shot prefix, then `Question: …\\nAnswer:`."""
    return count_tokens(f"{_prefix_text(prefix_path)}Question: {question}\nAnswer:")


class ReplayChatModel(InlineChatModel):
    """Answers with one model's recorded response to the question the prompt is about.

    The last human message is cut to its current subtask (`current_subtask`) and matched against the
    recorded questions. Usage metadata reflects the original call: input tokens are those of the
    few-shot prefix the recordings were made with plus `Question: <q>\\nAnswer:`, output tokens those of
    the recorded text (counted with `reso.agents.tokens.count_tokens`: exact for GPT-4-era OpenAI models,
    an approximation for other vocabularies).
    """

    replay_path: str
    """Resolved path of the replay JSONL file."""
    recorded_model: str
    """Name of the recorded model whose responses are returned (a key of `responses`)."""
    prefix_path: str | None = None
    """Few-shot prefix each recording was prompted with; None means the vendored GSM8K 8-shot prefix.
    Set it to an empty file for recordings made without a prefix."""

    _table: ReplayTable = PrivateAttr()
    _prefix: str = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        self._table = replay_table(self.replay_path)
        # Resolved once: locating package data may touch the file system, which must stay off the
        # event loop that `_agenerate` answers on.
        self._prefix = self.prefix_path or str(fewshot_prefix_path())
        _prompt_tokens(self._prefix, "")  # reads the prefix and loads the tokenizer now, not on the loop
        if self.recorded_model not in self._table.models:
            raise ReplayError(_unknown_model_message(self._table, self.recorded_model))

    @property
    def _llm_type(self) -> str:
        return "replay"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"replay_path": self.replay_path, "recorded_model": self.recorded_model,
                "prefix_path": self.prefix_path}

    def recording_for(self, messages: Sequence[BaseMessage]) -> Recording:
        """The recording that the last human message's current subtask is about.

        Raises:
            NoRecordingError: No recorded question matches, or this model has no response to it.
        """
        human = [m for m in messages if isinstance(m, HumanMessage)]
        text = current_subtask(human[-1].text) if human else ""
        recording = self._table.find(text)
        if recording is None or self.recorded_model not in recording.responses:
            raise NoRecordingError(
                f"no recording of this question in {self._table.path.name} for {self.recorded_model}"
            )
        return recording

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        recording = self.recording_for(messages)
        text = recording.responses[self.recorded_model]
        input_tokens = _prompt_tokens(self._prefix, recording.question)
        output_tokens = count_tokens(text)
        message = AIMessage(
            content=text,
            usage_metadata={
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "total_tokens": input_tokens + output_tokens,
            },
            response_metadata={
                "model_name": self.recorded_model,
                "replay_id": recording.id,
                "replay_file": str(self._table.path),
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def resolve_replay_path(target: str) -> Path:
    """The file of a `replay:<file>#<model>` target: as given, else relative to the packaged data folder."""
    from reso.agents.defaults import data_dir

    path = Path(target).expanduser()
    if path.is_absolute() or path.exists():
        return path.resolve()
    packaged = data_dir() / path
    return packaged.resolve() if packaged.exists() else path.resolve()


def load_replay_model(target: str, params: Mapping[str, Any] | None = None) -> ReplayChatModel:
    """Build a replay model from the target of a `replay:<file>#<model>` spec.

    Args:
        target: `<file>#<model>`; a relative file is looked up in the working directory, then in the
            package's data folder (so `gsm8k_replay_dev.jsonl#gpt-4-1106-preview` works anywhere).
        params: Optional `prefix_path` (the few-shot prefix the recordings used).

    Raises:
        ReplayError: No `#<model>` part, a missing or invalid file, or a model the file does not record.
    """
    file_part, sep, model_name = target.rpartition("#")
    if not sep or not file_part or not model_name:
        raise ReplayError(f"replay spec 'replay:{target}' must name a model: replay:<file>#<model>")
    extra = dict(params or {})
    prefix = extra.pop("prefix_path", None)
    if extra:
        raise ReplayError(f"replay:{target}: unknown params {sorted(extra)}; replay models take prefix_path")
    path = resolve_replay_path(file_part)
    table = replay_table(path)
    if model_name not in table.models:
        raise ReplayError(_unknown_model_message(table, model_name))
    return ReplayChatModel(
        replay_path=str(path),
        recorded_model=model_name,
        prefix_path=None if prefix is None else str(Path(prefix).expanduser().resolve()),
    )
