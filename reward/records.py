"""Labelled answer records: the training and evaluation data of Collaborative Reward Models.

The paper's format is `{instruction, answer, label}`; the project's training runs add the context the
answer was given, the agent and model that wrote it, and the question it belongs to. Files come as a JSON
list or JSONL of such records, or as the GSM8K replay JSONL (one question per line with every model's
recorded answer and a `correct` flag per model), in which case each recorded answer becomes one record.
The format is detected per file, and a malformed record fails with the file, line and field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

_OPTIONAL_TEXT_FIELDS = ("context", "agent_id", "model", "question_id", "reference")
_SPLIT_PATTERN = re.compile(r"^(first|last):(\d+)$")


@dataclass(frozen=True, slots=True)
class LabelledRecord:
    """One candidate answer with a 0/1 label saying whether it was right."""

    instruction: str
    answer: str
    label: int
    context: str = ""
    agent_id: str | None = None
    model: str | None = None
    question_id: str | None = None
    reference: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value not in (None, "")}


class RecordFormatError(ValueError):
    """A record file that cannot be read, with the place of the problem in the message."""

    def __init__(self, path: Path | str, line: int | None, field: str | None, problem: str) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        if field:
            where += f": field {field!r}"
        super().__init__(f"{where}: {problem}")
        self.path = str(path)
        self.line = line
        self.field = field


def _parse_label(value: Any, path: Path, line: int, field: str) -> int:
    # bool is a subclass of int, so it is accepted here as 0/1 on purpose.
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return int(value)
    if isinstance(value, float) and value in (0.0, 1.0):
        return int(value)
    raise RecordFormatError(path, line, field, f"expected 0/1 or true/false, got {value!r}")


def _text(obj: dict[str, Any], key: str, path: Path, line: int, *, required: bool) -> str | None:
    if key not in obj or obj[key] is None:
        if required:
            raise RecordFormatError(path, line, key, "missing")
        return None
    value = obj[key]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and key in ("question_id", "reference"):
        return str(value)
    if not isinstance(value, str):
        raise RecordFormatError(path, line, key, f"expected a string, got {type(value).__name__}")
    return value


def _paper_record(obj: dict[str, Any], path: Path, line: int) -> LabelledRecord:
    instruction = _text(obj, "instruction", path, line, required=True) or ""
    answer = _text(obj, "answer", path, line, required=True) or ""
    if "label" not in obj:
        raise RecordFormatError(path, line, "label", "missing")
    optional = {key: _text(obj, key, path, line, required=False) for key in _OPTIONAL_TEXT_FIELDS}
    return LabelledRecord(
        instruction=instruction,
        answer=answer,
        label=_parse_label(obj["label"], path, line, "label"),
        context=optional.pop("context") or "",
        **optional,
    )


def _replay_records(obj: dict[str, Any], path: Path, line: int) -> list[LabelledRecord]:
    question = _text(obj, "question", path, line, required=True) or ""
    qid = _text(obj, "id", path, line, required=True)
    reference = obj.get("answer")
    responses = obj.get("responses")
    correct = obj.get("correct")
    if not isinstance(responses, dict):
        raise RecordFormatError(path, line, "responses", "expected an object model -> text")
    if not isinstance(correct, dict):
        raise RecordFormatError(path, line, "correct", "expected an object model -> bool")
    records = []
    for model, text in responses.items():
        if not isinstance(text, str):
            raise RecordFormatError(path, line, f"responses.{model}", "expected a string")
        if model not in correct:
            raise RecordFormatError(path, line, f"correct.{model}", "missing")
        records.append(
            LabelledRecord(
                instruction=question,
                answer=text,
                label=_parse_label(correct[model], path, line, f"correct.{model}"),
                agent_id=model,
                model=model,
                question_id=str(qid),
                reference=None if reference is None else str(reference),
            )
        )
    return records


def _is_replay(obj: dict[str, Any]) -> bool:
    return "responses" in obj and "correct" in obj


def _records_from_objects(objects: Iterable[tuple[int, Any]], path: Path) -> list[LabelledRecord]:
    records: list[LabelledRecord] = []
    replay: bool | None = None
    for line, obj in objects:
        if not isinstance(obj, dict):
            raise RecordFormatError(path, line, None, f"expected a JSON object, got {type(obj).__name__}")
        if replay is None:
            replay = _is_replay(obj)
        if replay:
            records.extend(_replay_records(obj, path, line))
        else:
            records.append(_paper_record(obj, path, line))
    return records


def _json_list_lines(text: str, items: list[Any]) -> list[int]:
    """Line numbers where each top-level item of a JSON list starts (for error messages)."""
    decoder = json.JSONDecoder()
    lines = []
    pos = text.index("[") + 1
    for _ in items:
        while text[pos] in " \t\r\n,":
            pos += 1
        lines.append(text.count("\n", 0, pos) + 1)
        _, pos = decoder.raw_decode(text, pos)
    return lines


def load_records(path: Path | str) -> list[LabelledRecord]:
    """Read labelled answer records from a file, detecting its format.

    Args:
        path: a JSON list or JSONL file of paper-format records `{instruction, answer, label}` (optional
            `context`, `agent_id`, `model`, `question_id`, `reference`), or the replay JSONL
            (`id`, `question`, `answer`, `responses`, `correct`), where every recorded answer becomes one
            record labelled by `correct`.

    Returns:
        The records in file order (replay answers in the order of each line's `responses`).

    Raises:
        RecordFormatError: the file is not valid JSON/JSONL or a record misses or mistypes a field; the
            message names the file, line and field.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RecordFormatError(path, None, None, f"cannot read: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")  # editors on Windows write a byte-order mark
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise RecordFormatError(path, line, None, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                                                  f"{exc.start})") from None
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordFormatError(path, exc.lineno, None, f"invalid JSON: {exc.msg}") from exc
        return _records_from_objects(zip(_json_list_lines(text, items), items), path)

    def objects() -> Iterable[tuple[int, Any]]:
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                yield number, json.loads(raw)
            except json.JSONDecodeError as exc:
                raise RecordFormatError(path, number, None, f"invalid JSON: {exc.msg}") from exc

    return _records_from_objects(objects(), path)


def write_records(path: Path | str, records: Iterable[LabelledRecord]) -> Path:
    """Write records as paper-format JSONL (one object per line, empty optional fields left out).

    Args:
        path: the file to write; parent folders are created.
        records: the records to write.

    Returns:
        The path written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
    return path


def question_key(record: LabelledRecord) -> str:
    """The key that groups a record with the other candidates for the same question."""
    return record.question_id if record.question_id is not None else record.instruction


def question_order(records: Sequence[LabelledRecord]) -> list[str]:
    """Question keys in order of first appearance."""
    return list(dict.fromkeys(question_key(record) for record in records))


def split_by_question(records: Sequence[LabelledRecord], spec: str | None) -> list[LabelledRecord]:
    """Select records by question, so that no question's answers fall on both sides of a split.

    Args:
        records: records in file order.
        spec: `first:N` (the first N questions in order of appearance), `last:N`, or None for all.

    Returns:
        The records of the selected questions, in their original order.

    Raises:
        ValueError: the spec is not `first:N` or `last:N`.
    """
    if spec is None:
        return list(records)
    match = _SPLIT_PATTERN.match(spec.strip())
    if match is None:
        raise ValueError(f"split {spec!r}: expected 'first:N' or 'last:N'")
    side, count = match.group(1), int(match.group(2))
    order = question_order(records)
    chosen = set(order[:count] if side == "first" else order[max(len(order) - count, 0):])
    return [record for record in records if question_key(record) in chosen]
