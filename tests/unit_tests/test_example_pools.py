"""The shipped example pools load: every model is priced, every role is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from reso.agents.pool import load_pool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "pools"


@pytest.mark.parametrize("name, size", [("paper.yaml", 7 * 9 + 1), ("vllm.yaml", 2 * 4 + 1)])
def test_example_pool_loads(name: str, size: int) -> None:
    pool = load_pool(EXAMPLES / name)
    assert len(pool) == size
    assert all(agent.price_in >= 0 and agent.price_out >= 0 for agent in pool)
    assert pool.get("tool/calculator").kind == "tool"


def test_paper_pool_prices_come_from_the_list_or_the_file() -> None:
    pool = load_pool(EXAMPLES / "paper.yaml")
    assert pool.get("gpt-4o-mini/algebra").price_in == 0.15
    assert pool.get("claude-3-5-sonnet/geometry").price_out == 15.0
