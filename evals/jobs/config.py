"""What the main job runs: the worlds and their benchmarks, ReSo's settings fixed before any test run, the
CRMs it can fit, and `DemoConfig`, the job's settings; which benchmarks a config runs and on which pool."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reso.evals.backends.base import Backend
    from reso.evals.jobs.recorded_benchmark import RecordedBenchmark
from reso.graphs.asking_config import AskingRule, EscalateTo


@dataclass(frozen=True)
class Benchmark:
    """One benchmark of a world: its dataset names are `<stem>-<level>-train|test`."""

    stem: str
    title: str
    pool: str = ""
    """The world's pool (a packaged file name or a path); empty: the default pool."""
    datasets: tuple[str, str] | None = None
    """The (train, test) datasets, names or files; None: the registered `<stem>-<level>-train|test`."""

    def splits(self, level: str) -> tuple[str, str]:
        return self.datasets or (f"{self.stem}-{level}-train", f"{self.stem}-{level}-test")


WORLDS: dict[str, tuple[Benchmark, ...]] = {
    "many": (
        Benchmark("math-l5-mas", "MATH-MAS-L5", "zeroeval_pool.yaml"),
        Benchmark("gsm8k-l-mas", "GSM8K-MAS (linked)", "zeroeval_pool.yaml"),
    ),
    "open": (
        Benchmark("math-l5-mas", "MATH-MAS-L5 (open-weight models)", "open_pool.yaml"),
        Benchmark("gsm8k-l-mas", "GSM8K-MAS (linked, open-weight models)", "open_pool.yaml"),
    ),
    "two-model": (Benchmark("gsm8k-mas", "GSM8K-MAS (GPT-4 and Mixtral)", "two_model_pool.yaml"),),
}

# ReSo's settings in the main job, fixed before any test run: asking that pays for itself at the settings'
# default value of a right answer (`DEFAULT_ANSWER_VALUE_USD`), at most four answers a subtask.
RESO_TEST: dict[str, Any] = {"asking.rule": AskingRule.PRICED, "asking.k_max": 4}
# The values of a right answer (USD a question) the frontier sweeps, fixed before any run: nine half-decades
# from a hundredth of a cent, where only the cheapest models pay, to a dollar, where every check of the
# strongest model does. Each is a test run of its own beside the ReSo row.
MIN_RECORDED = 0.9
"""A benchmark's pool keeps the replay models that record at least this share of its training composites'
questions (`reso.evals.jobs.benchmark_pool`)."""
ANSWER_VALUES: tuple[float, ...] = tuple(round(10 ** (j / 2 - 4), 6) for j in range(9))
# The CRMs `reso demo` can fit on the training split (`reso.evals.jobs.crm_fit`); the first is the default.
CRMS = ("calibrated", "vote", "staged")
# Further ReSo settings run as rows of their own, each against the main row: the paper's fixed fine stage
# (what asking that pays adds), and the earlier confidence-threshold stage (ask one more candidate, the first
# in the cost-aware order that could beat the best answer, while the calibrated score is below 0.8).
RESO_VARIANTS: dict[str, dict[str, Any]] = {
    "fixed k=2": {"asking.rule": AskingRule.FIXED, "asking.k": 2},
    "confidence threshold 0.8": {"asking.rule": AskingRule.CONFIDENCE, "asking.k": 2, "asking.k_max": 3,
                                 "asking.confidence": 0.8, "asking.escalate_to": EscalateTo.RANKED},
}


@dataclass(frozen=True)
class DemoConfig:
    """What `reso demo` runs: the world, the composite size, the pool, and how training and testing go.

    The fields with a description are the `demo` section of the command's settings (`reso settings`); the others
    are the job's own, fixed before any run."""

    out: Path
    world: str = field(default="many", metadata={"cli": True, "answers": False, "description": (
        "many: a dozen recorded models on linked MATH level-5 and GSM8K composites; open: the same benchmarks with "
        "the 27 recorded open-weight models (open_pool.yaml); two-model: GPT-4 and Mixtral on GSM8K-MAS.")})
    level: str = field(default="easy", metadata={"cli": True, "answers": False, "description": (
        "Composite size: easy (3 sub-questions), medium (5), hard (7).")})
    pool: str = field(default="", metadata={"cli": True, "answers": False, "unset": "the world's replay pool",
                                            "description": "Pool YAML or replay:FILE[,FILE…]."})
    prices: str = field(default="", metadata={"answers": False, "unset": "the pool's own prices", "description": (
        "A price list (YAML: model → USD per million input and output tokens) over the pool's own prices.")})
    concurrency: int = field(default=16, metadata={"answers": False, "description": "Questions in flight at once."})
    seed: int = field(default=0, metadata={"cli": True, "answers": False, "description": "Seed of every run."})
    train_limit: int | None = field(default=None, metadata={"answers": False, "description": (
        "Only the first N training items (none: every item).")})
    test_limit: int | None = field(default=None, metadata={"answers": False, "description": (
        "Only the first N test items (none: every item).")})
    train_n: int = field(default=200, metadata={"answers": False, "description": (
        "Training composites of your own question files (--train-questions).")})
    test_n: int = field(default=100, metadata={"answers": False, "description": (
        "Test composites of your own question files (--test-questions).")})
    training_scorer: str = "consensus"
    training_k: int = 3
    training_concurrency: int = 1
    """Training questions run one at a time, so what the DADB learns does not depend on which concurrent
    question finishes first (each selection has its own random stream, so sibling subtasks in worker
    threads draw alike in any order): the job is reproducible."""
    training_exploration: float = 1.0
    """Plain Thompson sampling in training: a learning run should not give up on an agent after an unlucky
    start (routing's sharper default, 0.3, can)."""
    training_answer_value_usd: float = math.inf
    """Training selects on skill alone (no price counts against an infinitely valuable answer), so every
    model's record is learned, the dear ones' too; the test weighs cost (a deployment pays; an offline
    training run on replayed answers does not)."""
    reso_variants: dict[str, dict[str, Any]] = field(default_factory=lambda: dict(RESO_VARIANTS))
    answer_values: tuple[float, ...] = field(default_factory=lambda: ANSWER_VALUES)
    """The frontier's sweep: one ReSo test run per value of a right answer (USD a question)."""
    swap_split: bool = field(default=False, metadata={"cli": True, "answers": False, "description": (
        "Train on the test split's composites and test on the training split's: a second draw whose test "
        "questions are all different from the first's.")})
    crm: str = field(default=CRMS[0], metadata={"cli": True, "answers": False, "description": (
        "The CRM fitted on the training split and used by every ReSo test run: calibrated (the small learned CRM "
        "trained on the pool's recorded answers to the training questions, recalibrated on the training run; the "
        "vote for a pool without recordings), vote (reliability-weighted vote) or staged (the small learned CRM "
        "fitted on a staged pass shaped like the test's fine stage).")})
    backend: Backend | None = None
    """Where the questions are answered (`reso.evals.backends.base`); None: in this process."""
    recorded: RecordedBenchmark | None = None
    """The user's own question files instead of the world's benchmarks
    (`reso.evals.jobs.recorded_benchmark`)."""
    min_recorded: float = field(default=MIN_RECORDED, metadata={"answers": False, "description": (
        "Each benchmark's team leaves out the replay models that record less than this share of its training "
        "composites' questions (the pool it ran on is written to its folder); 0 keeps every model.")})

    def __post_init__(self) -> None:
        if self.world not in WORLDS:
            raise ValueError(f"demo.world must be one of {', '.join(WORLDS)}, got {self.world!r}")
        if self.level not in ("easy", "medium", "hard"):
            raise ValueError(f"demo.level must be easy, medium or hard, got {self.level!r}")
        if self.crm not in CRMS:
            raise ValueError(f"demo.crm must be one of {', '.join(CRMS)}, got {self.crm!r}")
        if not 0.0 <= self.min_recorded <= 1.0:
            raise ValueError(f"demo.min_recorded must be in [0, 1], got {self.min_recorded}")
        if self.concurrency < 1 or self.train_n < 1 or self.test_n < 1:
            raise ValueError("demo.concurrency, demo.train_n and demo.test_n must be >= 1")


def world_pool(config: DemoConfig, benchmark: Benchmark) -> str:
    """The pool file a benchmark runs on: `--pool`, else the world's packaged pool."""
    if config.pool or not benchmark.pool:
        return config.pool
    from reso.agents.defaults import data_dir

    return str(data_dir() / benchmark.pool)


def training_side(config: DemoConfig) -> str:
    """The side of the question split the training composites come from (`split_by_question`'s name)."""
    return "test" if config.swap_split else "train"


def benchmarks_of(config: DemoConfig) -> tuple[Benchmark, ...]:
    """The benchmarks the job runs: the world's, or the user's own files' composites (built into the output
    folder, after checking that no question is on both sides)."""
    recorded = config.recorded
    if recorded is None:
        return WORLDS[config.world]
    if not config.pool:
        raise ValueError("a job on your own question files needs --pool: the models that answer them")
    recorded.check_disjoint()
    datasets = recorded.write_datasets(config.out / recorded.name / "datasets", config.level)
    return (Benchmark(recorded.name, recorded.name, datasets=datasets),)
