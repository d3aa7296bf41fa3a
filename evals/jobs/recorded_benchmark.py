"""The main job on anyone's recordings: linked composites from a user's own files of recorded answers.

A user's evaluation harness writes files in the vendored recordings' format (one JSON object a line: `id`,
`question`, `answer`, and optionally `responses`, `extracted` and `correct` per model; see
`../shared/data/zeroeval/README.md`). `reso demo --train-questions F1[,F2] --test-questions F3[,F4]` runs the
main job's protocol on them: training composites are linked from the first files' questions, test composites
from the second's, the CRM learns from the recorded answers to the training questions only, and the pool's
replay models answer both sides from whichever file records a question.

No question may be on both sides: `check_disjoint` refuses files that share one (by whitespace-normalised
text), naming both files and the question.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from reso.evals.datasets.problem import DatasetError
from reso.evals.synth.questions import build_linked_mas, read_question_files, read_questions

__all__ = ["RecordedBenchmark"]

SIZES = {"easy": 3, "medium": 5, "hard": 7}
SEED = 0


def _key(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class RecordedBenchmark:
    """A benchmark of linked composites built from the user's files: a name, the two sides' files, and how
    many composites each side gets."""

    name: str
    train_files: tuple[Path, ...]
    test_files: tuple[Path, ...]
    train_n: int = 200
    test_n: int = 100

    def __post_init__(self) -> None:
        if not self.name or any(ch in self.name for ch in "/\\"):
            raise ValueError(f"--benchmark: a name without slashes, got {self.name!r}")
        if not self.train_files or not self.test_files:
            raise ValueError("give at least one file on each side (--train-questions and --test-questions)")
        if self.train_n < 1 or self.test_n < 1:
            raise ValueError(f"need at least one composite a side, got {self.train_n} and {self.test_n}")

    def check_disjoint(self) -> None:
        """Refuse files whose sides share a question.

        Raises:
            DatasetError: Naming a training file, a test file and the first question they share, and how many.
        """
        train: dict[str, Path] = {}
        for path in self.train_files:
            train.update((_key(q.text), path) for q in read_questions(path).questions)
        shared: list[tuple[str, Path, Path]] = []
        for path in self.test_files:
            shared += [(q.text, train[_key(q.text)], path) for q in read_questions(path).questions
                       if _key(q.text) in train]
        if shared:
            text, train_path, test_path = shared[0]
            raise DatasetError(f"{train_path} and {test_path}: {len(shared)} question(s) on both sides, e.g. "
                               f"{text[:80]!r}; a question may be a training or a test question, not both")

    def question_texts(self, side: str) -> set[str]:
        """The whitespace-normalised texts of the questions of one side ("train" or "test")."""
        files = self.train_files if side == "train" else self.test_files
        return {_key(q.text) for q in read_question_files(files).questions}

    def write_datasets(self, folder: Path, level: str) -> tuple[str, str]:
        """Build both sides' composites into `folder` (release-format JSON) and return their paths as the
        (train, test) datasets of the job."""
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for side, files, n in (("train", self.train_files, self.train_n), ("test", self.test_files, self.test_n)):
            built = build_linked_mas(list(files), size=SIZES[level], n=n, seed=SEED, split="all",
                                     id_prefix=f"{self.name}-{level}-{side}")
            path = folder / f"{self.name}-{level}-{side}.json"
            path.write_text(json.dumps(built.items, indent=1), encoding="utf-8")
            paths.append(str(path))
        return paths[0], paths[1]

    @staticmethod
    def files(text: str) -> tuple[Path, ...]:
        """`F1[,F2…]` as paths."""
        return tuple(Path(part.strip()) for part in text.split(",") if part.strip())

    @classmethod
    def of(cls, name: str, train: str, test: str, train_n: int, test_n: int) -> RecordedBenchmark:
        return cls(name, cls.files(train), cls.files(test), train_n, test_n)

    def sources(self) -> Sequence[str]:
        """Every file, for provenance and the CRM's fingerprint."""
        return [str(p) for p in (*self.train_files, *self.test_files)]
