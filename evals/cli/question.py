"""The question of `reso solve` and `reso plan`: an argument, a file, or standard input (`-`)."""

from __future__ import annotations

import sys
from pathlib import Path


class QuestionInputError(ValueError):
    """The question could not be read (missing, empty, given twice, unreadable or not UTF-8)."""


def read_question(question: str | None, file: Path | str | None) -> str:
    """The question from the argument, a file, or standard input (`-` as the argument or the file), stripped.

    Raises:
        QuestionInputError: No question, an empty one, both an argument and a file, or a file that cannot be
            read as UTF-8 text; the message says which.
    """
    if question is not None and file is not None:
        raise QuestionInputError("give the question either as an argument or with --file, not both")
    source = str(file) if file is not None else question
    if source is None:
        raise QuestionInputError("no question given (argument, --file FILE, or - for standard input)")
    if source == "-":
        text, where = sys.stdin.read(), "standard input"
    elif file is not None:
        try:
            text = Path(file).read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise QuestionInputError(f"cannot read question file {file}: not valid UTF-8 "
                                     f"(byte 0x{error.object[error.start]:02x} at offset {error.start})") from None
        except OSError as error:
            raise QuestionInputError(f"cannot read question file {file}: {error.strerror or error}") from None
        where = f"file {file}"
    else:
        text, where = source, "the argument"
    if not text.strip():
        raise QuestionInputError(f"no question given: the question in {where} is empty")
    return text.strip()
