"""The `run` section of `reso eval`'s settings: how one evaluation run goes besides the run settings (which
questions, how many at once, the run's budgets, what it reads). It imports nothing heavy, so the command line
can build its options from it."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RunOptions"]


@dataclass(kw_only=True, frozen=True)
class RunOptions:
    """How one `reso eval` run goes: its questions, how many at once, its budgets, and what it reads besides the
    settings. None of them changes an answer (a run budget decides how many items run, not what they answer)."""

    limit: int | None = field(default=None, metadata={"cli": True, "answers": False, "description": (
        "Only the first N items (none: every item).")})
    concurrency: int = field(default=8, metadata={"cli": True, "answers": False, "description": (
        "Questions in flight at once (over all workers with backend.kind ray).")})
    budget_usd: float | None = field(default=None, metadata={"answers": False, "description": (
        "Stop calling models past this run total (USD; none: no limit).")})
    budget_tokens: int | None = field(default=None, metadata={"answers": False, "description": (
        "Stop calling models past this run total of tokens (none: no limit).")})
    budget_seconds: float | None = field(default=None, metadata={"answers": False, "description": (
        "Stop calling models after this long (s; none: no limit).")})
    prices: str = field(default="", metadata={"answers": False, "description": (
        "A price list (YAML: model → USD per million input and output tokens) over the pool's own prices.")})
    cache: bool = field(default=True, metadata={"answers": False, "description": (
        "Serve identical model calls from the response cache.")})
    cache_file: str = field(default="", metadata={"answers": False, "description": (
        "Response cache file; empty: OUT/responses.sqlite (name one file to share it between runs).")})
    data_root: str = field(default="", metadata={"answers": False, "description": (
        "Folder holding reso-mas/ and gsm8k-replay/; empty: $RESO_DATA_ROOT, else ../shared/data.")})

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"run.concurrency must be >= 1, got {self.concurrency}")
        if self.limit is not None and self.limit < 0:
            raise ValueError(f"run.limit must be >= 0, got {self.limit}")
