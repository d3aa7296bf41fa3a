"""The open-weight pool (`agents/data/open_pool.yaml`) holds exactly the models its header's rule selects from
the vendored recordings, and its header's table states their prices and accuracies as the files give them."""

from __future__ import annotations

import re
from pathlib import Path

from reso.agents.adapters.prices import load_price_list
from reso.agents.adapters.replay import replay_table
from reso.agents.defaults import open_pool_path, vendored_prices_path, zeroeval_pool_path
from reso.agents.pool import load_pool

FILES = ("math_l5_dev.jsonl.gz", "gsm8k_dev.jsonl.gz")
# The header's part (1), which the files cannot tell: models whose weights were never published, and API
# aliases that served changing checkpoints. Every other recorded model is open-weight.
CLOSED = {
    "chatgpt-4o-latest-24-09-07", "claude-3-5-sonnet-20240620", "claude-3-haiku-20240307",
    "claude-3-opus-20240229", "claude-3-sonnet-20240229", "gemini-1.5-flash", "gemini-1.5-flash-exp-0827",
    "gemini-1.5-pro", "gemini-1.5-pro-exp-0801", "gemini-1.5-pro-exp-0827", "gpt-3.5-turbo-0125", "gpt-4-0314",
    "gpt-4-turbo-2024-04-09", "gpt-4o-2024-05-13", "gpt-4o-2024-08-06", "gpt-4o-mini-2024-07-18",
    "o1-mini-2024-09-12", "o1-preview-2024-09-12", "reka-core-20240501", "reka-flash-20240226", "yi-large",
    "yi-large-preview",
}
ALIASES = {"deepseek-chat", "deepseek-coder", "command-r", "command-r-plus"}
ROW = re.compile(r"^#   (\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+|–)\s+([\d.]+|–)(?:\s+.*)?$")


def recorded_models(pool_path: Path) -> dict[str, list[str]]:
    """The pool's LLM models by recorded name, each with the file names its spec replays."""
    return {agent.model.model_name: [Path(f).name for f in agent.model.target.rsplit("#", 1)[0].split(",")]
            for agent in load_pool(pool_path) if agent.kind == "llm"}


def test_the_open_pool_is_every_open_weight_model_recording_90_percent_of_a_file() -> None:
    tables = {name: replay_table(open_pool_path().parent / name) for name in FILES}
    everyone = set().union(*(table.models for table in tables.values()))
    assert CLOSED | ALIASES < everyone  # every name above is a recorded model

    def share(model: str, name: str) -> float:
        table = tables[name]
        return sum(model in rec.responses for rec in table.recordings) / len(table)

    chosen = {m for m in everyone - CLOSED - ALIASES if max(share(m, name) for name in FILES) >= 0.9}
    models = recorded_models(open_pool_path())
    assert set(models) == chosen and len(chosen) == 27
    assert "Meta-Llama-3.1-70B-Instruct@hyperbolic" not in chosen  # open, but 58 % of MATH only
    for model, files in models.items():  # each spec replays exactly the files that record the model
        assert files == [name for name in FILES if model in tables[name].models], model
    assert sum(files == ["math_l5_dev.jsonl.gz"] for files in models.values()) == 6
    assert sum(files == ["gsm8k_dev.jsonl.gz"] for files in models.values()) == 5


def test_the_open_pool_prices_every_model_and_has_the_curated_roles_and_tool() -> None:
    pool, curated = load_pool(open_pool_path()), load_pool(zeroeval_pool_path())
    listed = load_price_list(vendored_prices_path())
    for agent in pool:
        if agent.kind == "llm":
            assert (agent.price_in, agent.price_out) == listed.get(agent.model.model_name), agent.id
    assert {a.role for a in pool if a.kind == "llm"} == {a.role for a in curated if a.kind == "llm"}
    assert [a.id for a in pool if a.kind == "tool"] == ["tool/calculator"]
    assert len(pool) == 27 * 4 + 1 and len({a.id for a in pool}) == len(pool)


def test_the_open_pool_header_table_states_the_files_prices_and_accuracies() -> None:
    tables = {name: replay_table(open_pool_path().parent / name) for name in FILES}
    listed = load_price_list(vendored_prices_path())
    rows = [m.groups() for line in open_pool_path().read_text(encoding="utf-8").splitlines()
            if (m := ROW.match(line))]
    assert [row[0] for row in rows] == list(recorded_models(open_pool_path()))  # in the pool's order
    for model, price_in, price_out, *accuracies in rows:
        assert (float(price_in), float(price_out)) == listed.get(model), model
        for name, stated in zip(FILES, accuracies, strict=True):
            table = tables[name]
            if model not in table.models:
                assert stated == "–", model
                continue
            right = sum(bool(rec.correct.get(model)) for rec in table.recordings)
            assert stated == f"{right / len(table):.3f}", (model, name)
