"""Replay agents: chat models that answer with recorded outputs of real models, offline.

A replay model returns one recorded model's text (`reso.agents.adapters.replay_table` reads the files) to the
question a prompt asks (`reso.agents.adapters.replay_question`: the current subtask, without the release's suffix,
with linked constants computed from the prompt's earlier answers), matched exactly. It may hold several
files (a model recorded on MATH and on GSM8K is one model) and answers from whichever has a recording of
the question. A prompt with no recording fails with `NoRecordingError`, a failure that costs nothing: a
replay agent never invents an answer.

One question is answered from a recording of another: a linked sub-question whose constant, computed from a
wrong (or missing) parent answer, gives a question no file records. A live model would answer it, and
usually the way it answered the original sub-question (the recorded question that reads the same with each
linked constant as any number), so the replay model answers with its recording of the original, charged as
that call (`response_metadata["replay_of_original"]` says so). The composite is wrong anyway (its parent
was), a model's own mistakes do not make its run cheaper, and a method is not made to ask more models for a
failure a live model would not have had. Without a recording of the original it is a plain
`NoRecordingError`.

Usage metadata is the original call's: input tokens are those of the prompt the recordings were made with
(the GSM8K 8-shot prefix for RouteLLM's file, the zero-shot JSON instruction for the others; see
`reso.agents.defaults`), output tokens those of the recorded text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from reso.agents.adapters.failures import DeclinedCall, FailureKind
from reso.agents.adapters.inline import InlineChatModel
from reso.agents.adapters.release_text import LINKED_CONSTANT_RE
from reso.agents.adapters.replay_question import asked_question, original_pattern, subtask_text
from reso.agents.adapters.replay_table import (
    Recording,
    ReplayError,
    ReplayTable,
    normalise_question,
    replay_correctness,
    replay_table,
)
from reso.agents.adapters.tokens import count_tokens
from reso.agents.defaults import FEWSHOT_REPLAY_FILES, fewshot_prefix_path, zeroshot_prompt_path

__all__ = [
    "NoRecordingError", "Recording", "ReplayChatModel", "ReplayError", "ReplayTable",
    "load_replay_model", "normalise_question", "replay_correctness", "replay_table", "resolve_replay_path",
]

QUESTION_SLOT = "{question}"
FEWSHOT_QUESTION = "Question: {question}\nAnswer:"


class NoRecordingError(DeclinedCall, LookupError):
    """The prompt is about a question that the replay files have no recording of (for this model)."""

    kind = FailureKind.NO_RECORDING


@lru_cache(maxsize=8)
def _read_text(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def prompt_template(replay_file: Path, prefix_path: str | None = None) -> str:
    """The prompt (with a `{question}` slot) the recordings of `replay_file` were made with.

    Args:
        replay_file: The replay file.
        prefix_path: A few-shot prefix the recordings used, followed by `Question: <q>\\nAnswer:`; an empty
            file means the bare question in that frame. None: the file's default (see `reso.agents.defaults`).
    """
    if prefix_path is not None:
        return _read_text(prefix_path) + FEWSHOT_QUESTION
    if replay_file.name in FEWSHOT_REPLAY_FILES:
        return _read_text(str(fewshot_prefix_path())) + FEWSHOT_QUESTION
    return _read_text(str(zeroshot_prompt_path()))


@lru_cache(maxsize=8192)
def _prompt_tokens(template: str, question: str) -> int:
    return count_tokens(template.replace(QUESTION_SLOT, question))


@lru_cache(maxsize=4096)
def _originals(table: ReplayTable, text: str) -> tuple[Recording, ...]:
    """The recordings of `table` that may be the original of linked sub-question `text` (a scan of the
    table, hence cached: a benchmark asks each linked sub-question again for every method)."""
    pattern = original_pattern(text)
    return () if pattern is None else tuple(table.matching(pattern))


def _unknown_model_message(table: ReplayTable, model_name: str) -> str:
    known = ", ".join(sorted(table.models))
    return f"{table.path}: no recordings for model {model_name!r}; the file's models are: {known}"


class ReplayChatModel(InlineChatModel):
    """Answers with one model's recorded response to the question the prompt asks.

    The last human message is read with `asked_question` and matched exactly against the recorded
    questions of each file in turn. Token counts are exact for GPT-4-era OpenAI vocabularies and an
    approximation for others (`reso.agents.adapters.tokens.count_tokens`).
    """

    replay_path: str = ""
    """Resolved path of the replay file (a model over several files sets `replay_paths` instead)."""
    replay_paths: tuple[str, ...] = ()
    """Resolved paths of the replay files, searched in order."""
    recorded_model: str
    """Name of the recorded model whose responses are returned (a key of `responses`)."""
    prefix_path: str | None = None
    """Few-shot prefix the recordings were prompted with, for every file; None means each file's own
    (`prompt_template`)."""

    _tables: list[ReplayTable] = PrivateAttr()
    _templates: list[str] = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        paths = self.paths
        if not paths:
            raise ReplayError(f"replay model {self.recorded_model!r}: no replay file given")
        self._tables = [replay_table(path) for path in paths]
        for table in self._tables:
            if self.recorded_model not in table.models:
                raise ReplayError(_unknown_model_message(table, self.recorded_model))
        # Read (and the tokenizer loaded) now: locating package data touches the file system, which must
        # stay off the event loop that `_agenerate` answers on.
        self._templates = [prompt_template(table.path, self.prefix_path) for table in self._tables]
        _prompt_tokens(self._templates[0], "")

    @property
    def paths(self) -> tuple[str, ...]:
        return self.replay_paths or ((self.replay_path,) if self.replay_path else ())

    @property
    def _table(self) -> ReplayTable:
        """The first file's table (the only one of a single-file model)."""
        return self._tables[0]

    @property
    def _llm_type(self) -> str:
        return "replay"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"replay_path": ",".join(self.paths), "recorded_model": self.recorded_model,
                "prefix_path": self.prefix_path}

    def _lookup(self, messages: Sequence[BaseMessage]) -> tuple[Recording, int, bool]:
        """The recording that answers the prompt, its file's index, and whether it is the original of a linked
        sub-question asked after a wrong parent (module docstring)."""
        human = [m for m in messages if isinstance(m, HumanMessage)]
        prompt = human[-1].text if human else ""
        question = asked_question(prompt) if human else None
        # Whether a file records the computed question (for another model): then this model merely lacks a
        # recording of it (right parents give the original itself), a miss that is not charged.
        recorded = False
        if question is not None:
            for index, table in enumerate(self._tables):
                recording = table.find(question)
                if recording is not None and self.recorded_model in recording.responses:
                    return recording, index, False
                recorded = recorded or recording is not None
        original = None if recorded or not human else self._original(subtask_text(prompt))
        if original is not None:
            return original[0], original[1], True
        names = ", ".join(table.path.name for table in self._tables)
        raise NoRecordingError(f"no recording of this question in {names} for {self.recorded_model}")

    def _original(self, text: str) -> tuple[Recording, int] | None:
        """This model's recording (and its file's index) of the original of linked sub-question `text`, or
        None (`text` links no constant, or the model has no recording of it)."""
        if LINKED_CONSTANT_RE.search(text) is None:  # a plain question: nothing to scan for, nor to cache
            return None
        for index, table in enumerate(self._tables):
            # Questions that differ only in the linked number all match; the first this model answered
            # stands for the original (they cost about the same), the same one for every method.
            for recording in _originals(table, text):
                if self.recorded_model in recording.responses:
                    return recording, index
        return None

    def _usage(self, recording: Recording, index: int) -> tuple[int, int]:
        """The (input, output) tokens of this model's recorded call to `recording` in file `index`."""
        input_tokens = _prompt_tokens(self._templates[index], recording.question)
        return input_tokens, count_tokens(recording.responses[self.recorded_model])

    def recording_for(self, messages: Sequence[BaseMessage]) -> Recording:
        """The recording that answers the question the last human message asks (for a linked sub-question
        after a wrong parent, this model's recording of the original).

        Raises:
            NoRecordingError: No file records that question (nor its original) with a response of this model.
        """
        return self._lookup(messages)[0]

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        recording, index, of_original = self._lookup(messages)
        text = recording.responses[self.recorded_model]
        input_tokens, output_tokens = self._usage(recording, index)
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
                "replay_file": str(self._tables[index].path),
                "replay_of_original": of_original,
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def resolve_replay_path(target: str) -> Path:
    """A replay file named in a spec: as given, else relative to the packaged data folder."""
    from reso.agents.defaults import data_dir

    path = Path(target).expanduser()
    if path.is_absolute() or path.exists():
        return path.resolve()
    packaged = data_dir() / path
    return packaged.resolve() if packaged.exists() else path.resolve()


def split_replay_target(target: str) -> tuple[list[str], str]:
    """The files and the model of a `<file>[,<file>…]#<model>` target (the model may be empty)."""
    file_part, _, model_name = target.rpartition("#") if "#" in target else (target, "", "")
    return [part.strip() for part in file_part.split(",") if part.strip()], model_name


def load_replay_model(target: str, params: Mapping[str, Any] | None = None) -> ReplayChatModel:
    """Build a replay model from the target of a `replay:<file>[,<file>…]#<model>` spec.

    Args:
        target: `<file>#<model>`, or several files separated by commas (the model answers from whichever
            records the question). A relative file is looked up in the working directory, then in the
            package's data folder (so `gsm8k_replay_dev.jsonl#gpt-4-1106-preview` works anywhere).
        params: Optional `prefix_path` (a few-shot prefix the recordings used).

    Raises:
        ReplayError: No `#<model>` part, a missing or invalid file, or a file that does not record the model.
    """
    files, model_name = split_replay_target(target)
    if not files or not model_name:
        raise ReplayError(f"replay spec 'replay:{target}' must name a model: replay:<file>[,<file>…]#<model>")
    extra = dict(params or {})
    prefix = extra.pop("prefix_path", None)
    if extra:
        raise ReplayError(f"replay:{target}: unknown params {sorted(extra)}; replay models take prefix_path")
    paths = [str(resolve_replay_path(name)) for name in files]
    for path in paths:  # named here, before the model is built: the loader's errors name the file
        table = replay_table(path)
        if model_name not in table.models:
            raise ReplayError(_unknown_model_message(table, model_name))
    return ReplayChatModel(
        replay_path=paths[0] if len(paths) == 1 else "",
        replay_paths=tuple(paths) if len(paths) > 1 else (),
        recorded_model=model_name,
        prefix_path=None if prefix is None else str(Path(prefix).expanduser().resolve()),
    )
