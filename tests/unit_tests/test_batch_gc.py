"""The collector's settings during a batch: tuned inside, restored by the last batch to end."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from reso.evals.batch_gc import YOUNG_THRESHOLD, batch_collector


@pytest.fixture(autouse=True)
def _default_collector() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def test_a_batch_freezes_what_is_alive_and_collects_the_young_less_often() -> None:
    assert gc.get_freeze_count() == 0
    with batch_collector():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_overlapping_batches_restore_the_settings_only_when_the_last_ends() -> None:
    first, second = batch_collector(), batch_collector()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first ends while the second still runs
    assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    assert gc.get_freeze_count() > 0
    second.__exit__(None, None, None)
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_settings_come_back_when_the_batch_fails() -> None:
    with pytest.raises(RuntimeError), batch_collector():
        raise RuntimeError("a question broke the run")
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_automatic_collection_switched_off_stays_off() -> None:
    gc.set_threshold(0)
    with batch_collector():
        assert gc.get_threshold()[0] == 0
    assert gc.get_threshold()[0] == 0
