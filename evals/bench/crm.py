"""Batched against one-at-a-time PRM scoring, side by side in one run (`reso bench crm`).

Both modes score the same items with the same `ProcessRewardScorer`, only its batch size differs, so the
ratio isolates batching: rendering, tokenisation, length sorting and the forward passes are all inside the
timed call. The two modes alternate from repeat to repeat (a loaded machine slows both alike) and the
median of the repeats is reported. The default model is a randomly initialised Qwen2 PRM of 4M parameters
and the answers run to a few hundred tokens, so a forward pass is dominated by its matrix products rather
than by per-call overhead.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from reso.evals.bench.synthetic_prm import (
    BENCH_CPU_SIZE,
    TEST_SIZE,
    PRMSize,
    build_prm_model,
    build_tokenizer,
    synthetic_items,
)
from reso.reward.base import ScoreItem
from reso.reward.prm import ProcessRewardScorer

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


def padded_tokens(lengths: Sequence[int], batch_size: int) -> int:
    """Tokens a length-sorted batched run pushes through the model, padding included."""
    ordered = sorted(lengths, reverse=True)
    return sum(max(chunk) * len(chunk) for chunk in
               (ordered[i:i + batch_size] for i in range(0, len(ordered), batch_size)))


def measure_side_by_side(scorer: ProcessRewardScorer, items: Sequence[ScoreItem], *, batch_size: int,
                         repeats: int, progress: Progress = _quiet) -> dict[str, Any]:
    """Time `scorer.score(items)` at `batch_size` and at 1, alternating, after a warm-up of both.

    Returns:
        Per mode the median seconds, items/s and tokens/s (tokens without padding), the speedup
        (single median / batched median), the padding overhead and the largest score difference.
    """
    if repeats < 1 or batch_size < 1 or not items:
        raise ValueError("need at least one item, one repeat and a batch size of at least 1")
    lengths = [len(scorer.encode(item)) for item in items]
    tokens = sum(lengths)
    saved = scorer.batch_size
    times: dict[int, list[float]] = {batch_size: [], 1: []}
    scores: dict[int, list[float]] = {}
    try:
        for size in (batch_size, 1):  # warm-up: allocator, kernels, thread pools
            scorer.batch_size = size
            scorer.score(list(items[:min(len(items), batch_size)]))
        for repeat in range(repeats):
            for size in (batch_size, 1) if repeat % 2 == 0 else (1, batch_size):
                scorer.batch_size = size
                start = time.perf_counter()
                scores[size] = scorer.score(items)
                times[size].append(time.perf_counter() - start)
                progress(f"repeat {repeat + 1}/{repeats}, batch {size}: {times[size][-1]:.2f} s")
    finally:
        scorer.batch_size = saved

    def mode(size: int) -> dict[str, Any]:
        median = statistics.median(times[size])
        return {"seconds_median": median, "seconds": times[size], "items_per_s": len(items) / median,
                "tokens_per_s": tokens / median}

    batched, single = mode(batch_size), mode(1)
    return {
        "batch_size": batch_size,
        "n": len(items),
        "repeats": repeats,
        "tokens": tokens,
        "mean_tokens_per_item": tokens / len(items),
        "padding_overhead": padded_tokens(lengths, batch_size) / tokens - 1.0,
        "batched": batched,
        "single": single,
        "speedup": single["seconds_median"] / batched["seconds_median"],
        "tokens_per_s_batched": batched["tokens_per_s"],
        "tokens_per_s_single": single["tokens_per_s"],
        "max_abs_score_diff": max(abs(a - b) for a, b in zip(scores[batch_size], scores[1], strict=True)),
    }


def run_crm_bench(*, batch_size: int = 16, n: int = 64, repeats: int = 3, threads: int | None = None,
                  size: PRMSize = BENCH_CPU_SIZE, sentences: tuple[int, int] = (12, 24), seed: int = 0,
                  progress: Progress = _quiet) -> dict[str, Any]:
    """The CPU benchmark: a random Qwen2 PRM of `size` in float32, `n` synthetic answers.

    Args:
        batch_size: The batched mode's batch size.
        n: Items scored per timed pass.
        repeats: Timed passes per mode.
        threads: torch intra-op threads (None keeps torch's default).
        size: The model's shape.
        sentences: Range of solution steps per answer (12–24 gives about 250–550 answer tokens).
        seed: Seed of the model weights and the items.
        progress: Called with a line per timed pass.
    """
    import torch

    if threads is not None:
        torch.set_num_threads(threads)
    tokenizer = build_tokenizer()
    model = build_prm_model(size, tokenizer, seed=seed)
    scorer = ProcessRewardScorer.from_model(model, tokenizer, name="prm:random-qwen2", device="cpu",
                                            dtype=torch.float32, batch_size=batch_size)
    items = synthetic_items(n, sentences=sentences, seed=seed)
    result = measure_side_by_side(scorer, items, batch_size=batch_size, repeats=repeats, progress=progress)
    return {
        "bench": "crm",
        **result,
        "device": "cpu",
        "dtype": "float32",
        "threads": torch.get_num_threads(),
        "model": size.description,
        "parameters": sum(parameter.numel() for parameter in model.parameters()),
        "load_average_1m": os.getloadavg()[0],
        "cpu_count": os.cpu_count(),
    }


def smoke_size() -> tuple[PRMSize, tuple[int, int]]:
    """The sizes `--smoke` runs use: the unit-test model and short answers."""
    return TEST_SIZE, (1, 3)


def render_table(report: dict[str, Any]) -> Any:
    """A rich table of the two modes, titled with the model and the speedup."""
    from rich.table import Table

    table = Table(title=(f"PRM scoring on {report['device']} ({report['model']}, {report['threads']} threads): "
                         f"batch {report['batch_size']} is {report['speedup']:.2f}x one at a time"))
    for column in ("mode", "median s", "items/s", "tokens/s"):
        table.add_column(column, justify="right")
    for label, row in ((f"batch {report['batch_size']}", report["batched"]), ("one at a time", report["single"])):
        table.add_row(label, f"{row['seconds_median']:.2f}", f"{row['items_per_s']:.1f}", f"{row['tokens_per_s']:.0f}")
    table.caption = (f"{report['n']} items, {report['mean_tokens_per_item']:.0f} tokens each on average, "
                     f"padding +{report['padding_overhead']:.1%}, max score difference "
                     f"{report['max_abs_score_diff']:.1e}")
    return table
