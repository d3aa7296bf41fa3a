"""Labelled answer records: the training and evaluation data of Collaborative Reward Models.

The paper's format is `{instruction, answer, label}`; the project's training runs add the context the
answer was given, the agent and model that wrote it, and the question it belongs to. Files come as a JSON
list or JSONL of such records, or as the many-model replay JSONL (one question per line with every model's
recorded answer and a `correct` flag per model: the GSM8K replay and ZeroEval files), in which case each
recorded answer becomes one record; any of them may be gzip-compressed (`.gz`). Step-labelled solutions
(ProcessBench's layout: `steps`, a list of step texts, and `first_error_step`, -1 when every step is
right) are records too: their answer is the steps joined, their label whether no step is wrong.
The format is detected per file, and a malformed record fails with the file, line and field.

Splits select whole questions: `first:N`, `last:N`, or `train`/`test` by a salted hash of the question's
text (the same hash and salt as the GSM8K-MAS split, so the CRM's held-out GSM8K questions are exactly the
questions GSM8K-MAS tests on).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

_OPTIONAL_TEXT_FIELDS = ("context", "agent_id", "model", "question_id", "reference")
_SPLIT_PATTERN = re.compile(r"^(first|last):(\d+)$")
_HASH_SPLIT_PATTERN = re.compile(r"^(train|test)(?::(0?\.\d+))?$")
# The salt of `reso.evals.synth.gsm8k.SPLIT_SALT` (the reward layer does not import evals): a question
# held out here is held out there, so no CRM is fitted on a question GSM8K-MAS tests on.
SPLIT_SALT = "reso-gsm8k-mas-split-v1"
DEFAULT_TEST_FRACTION = 0.2
# Step texts of a step-labelled solution are joined like ProcessBench's paragraphs.
STEP_JOIN = "\n\n"


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
    steps: tuple[str, ...] | None = None
    first_error_step: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data = {key: value for key, value in asdict(self).items() if value not in (None, "")}
        if self.steps is not None:
            data["steps"] = list(self.steps)
        return data


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


def _first_error_step(obj: dict[str, Any], steps: list[str], path: Path, line: int) -> tuple[int, str]:
    """The first wrong step's index and the field it came from (ProcessBench itself calls it `label`)."""
    field = "first_error_step" if "first_error_step" in obj else "label"
    if field not in obj:
        raise RecordFormatError(path, line, "first_error_step", "missing (a step-labelled record needs it)")
    value = obj[field]
    if isinstance(value, bool) or not isinstance(value, int) or not -1 <= value < len(steps):
        raise RecordFormatError(
            path, line, field, f"expected -1 (no wrong step) or a step index below {len(steps)}, got {value!r}"
        )
    return value, field


def _step_record(obj: dict[str, Any], path: Path, line: int) -> LabelledRecord:
    steps = obj["steps"]
    if not isinstance(steps, list) or not steps or not all(isinstance(step, str) for step in steps):
        raise RecordFormatError(path, line, "steps", "expected a non-empty list of step texts")
    question_field = next((key for key in ("instruction", "question", "problem") if key in obj), "instruction")
    instruction = _text(obj, question_field, path, line, required=True) or ""
    first_error, error_field = _first_error_step(obj, steps, path, line)
    # With `first_error_step` given, a `label` is the 0/1 verdict; otherwise the label follows the steps.
    if error_field == "first_error_step" and "label" in obj:
        label = _parse_label(obj["label"], path, line, "label")
    else:
        label = int(first_error == -1)
    answer = _text(obj, "answer", path, line, required=False) or STEP_JOIN.join(steps)
    optional = {key: _text(obj, key, path, line, required=False) for key in _OPTIONAL_TEXT_FIELDS}
    if optional["model"] is None:
        optional["model"] = _text(obj, "generator", path, line, required=False)
    if optional["question_id"] is None and "id" in obj:
        optional["question_id"] = str(obj["id"])
    return LabelledRecord(
        instruction=instruction,
        answer=answer,
        label=label,
        context=optional.pop("context") or "",
        steps=tuple(steps),
        first_error_step=first_error,
        **optional,
    )


def _paper_record(obj: dict[str, Any], path: Path, line: int) -> LabelledRecord:
    if "steps" in obj:
        return _step_record(obj, path, line)
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
        steps=None,
        first_error_step=None,
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


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RecordFormatError(path, None, None, f"cannot read: {exc.strerror or exc}") from exc
    if path.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise RecordFormatError(path, None, None, f"not a readable gzip file: {exc}") from None
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")  # editors on Windows write a byte-order mark
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise RecordFormatError(path, line, None, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                                                  f"{exc.start})") from None


def load_records(path: Path | str) -> list[LabelledRecord]:
    """Read labelled answer records from a file, detecting its format.

    Args:
        path: a JSON list or JSONL file (plain or `.gz`) of paper-format records `{instruction, answer,
            label}` (optional `context`, `agent_id`, `model`, `question_id`, `reference`), of step-labelled
            records (`steps`, `first_error_step`; see `_step_record`), or the replay JSONL (`id`,
            `question`, `answer`, `responses`, `correct`), where every recorded answer becomes one record
            labelled by `correct`.

    Returns:
        The records in file order (replay answers in the order of each line's `responses`).

    Raises:
        RecordFormatError: the file is not valid JSON/JSONL or a record misses or mistypes a field; the
            message names the file, line and field.
    """
    path = Path(path)
    text = _read_text(path)
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


def load_record_files(paths: str | Path | Sequence[str | Path]) -> list[LabelledRecord]:
    """Records of several files in order: a sequence of paths or one comma-separated string.

    Raises:
        RecordFormatError: as `load_records`, naming the file; also when no file is named.
    """
    if isinstance(paths, (str, Path)):
        names = [part.strip() for part in str(paths).split(",") if part.strip()]
    else:
        names = [str(part) for part in paths]
    if not names:
        raise RecordFormatError(str(paths), None, None, "no record file named")
    return [record for name in names for record in load_records(name)]


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


def hash_side(question: str, test_fraction: float = DEFAULT_TEST_FRACTION, salt: str = SPLIT_SALT) -> str:
    """"test" or "train": a salted hash of the whitespace-normalised question text, so the side depends
    neither on the file's order nor on ids (the same question in two files falls on the same side)."""
    key = " ".join(question.split()).encode("utf-8")
    bucket = int.from_bytes(hashlib.sha256(salt.encode("utf-8") + b"\0" + key).digest()[:8], "big") / 2**64
    return "test" if bucket < test_fraction else "train"


def split_by_question(records: Sequence[LabelledRecord], spec: str | None) -> list[LabelledRecord]:
    """Select records by question, so that no question's answers fall on both sides of a split.

    Args:
        records: records in file order.
        spec: `first:N` (the first N questions in order of appearance), `last:N`, `train` / `test` (a
            salted hash of the question text puts a fifth of the questions on the test side;
            `test:0.3` sets the fraction), or None for all.

    Returns:
        The records of the selected questions, in their original order.

    Raises:
        ValueError: the spec is none of these.
    """
    if spec is None:
        return list(records)
    hashed = _HASH_SPLIT_PATTERN.match(spec.strip())
    if hashed is not None:
        fraction = float(hashed.group(2)) if hashed.group(2) else DEFAULT_TEST_FRACTION
        if not 0.0 < fraction < 1.0:
            raise ValueError(f"split {spec!r}: the test fraction must be between 0 and 1")
        return [r for r in records if hash_side(r.instruction, fraction) == hashed.group(1)]
    match = _SPLIT_PATTERN.match(spec.strip())
    if match is None:
        raise ValueError(f"split {spec!r}: expected 'first:N', 'last:N', 'train', 'test' or 'test:0.2'")
    side, count = match.group(1), int(match.group(2))
    order = question_order(records)
    chosen = set(order[:count] if side == "first" else order[max(len(order) - count, 0):])
    return [record for record in records if question_key(record) in chosen]
