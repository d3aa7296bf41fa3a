"""The fine selection stage: the k candidates answer concurrently, a scorer rates the answers, best wins.

The scorer is any callable from a list of answers to a list of numbers (the reward layer's CRM, a vote, a
ground-truth rule); it may be synchronous or return an awaitable.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

A = TypeVar("A")
C = TypeVar("C")


async def run_fine_stage(
    candidates: Sequence[C],
    answer_fn: Callable[[C], Awaitable[A]],
    score_fn: Callable[[list[A]], Any],
) -> tuple[list[A], list[float], int]:
    """Run every candidate at once, score all answers in one call, and pick the best.

    Args:
        candidates: The coarse stage's candidates, best first.
        answer_fn: Produces one candidate's answer (an agent call).
        score_fn: Scores the answers, in order; may return a list or an awaitable of one.

    Returns:
        The answers, their scores, and the index of the best answer (the earliest candidate on a tie, so
        the coarse ranking breaks ties).

    Raises:
        ValueError: No candidates, or the scorer returned the wrong number of scores or a NaN.
    """
    if not candidates:
        raise ValueError("the fine stage needs at least one candidate")
    answers = list(await asyncio.gather(*(answer_fn(candidate) for candidate in candidates)))
    raw = score_fn(answers)
    if inspect.isawaitable(raw):
        raw = await raw
    scores = [float(value) for value in raw]
    if len(scores) != len(answers):
        raise ValueError(f"the scorer returned {len(scores)} scores for {len(answers)} answers")
    if any(math.isnan(value) for value in scores):
        raise ValueError(f"the scorer returned NaN among {scores}")
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    return answers, scores, best
