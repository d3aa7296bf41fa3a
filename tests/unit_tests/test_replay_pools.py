"""Pools over replay files: the roster of every recorded model, prices from the shipped and given price
lists, `--prices` on the command line, and the curated many-model pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from reso.agents.adapters.prices import LIST_PRICES, PriceListError, load_price_list
from reso.agents.adapters.replay import replay_table
from reso.agents.defaults import (
    all_models_pool_path,
    default_pool_path,
    vendored_prices_path,
    zeroeval_pool_path,
)
from reso.agents.pool import PoolError, load_pool
from reso.agents.pool_source import load_pool_for, pool_file_for
from reso.evals.cli import app

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "replay"
MATH = FIXTURES / "math_mini.jsonl.gz"
GSM = FIXTURES / "gsm_mini.jsonl"
PRICES = FIXTURES / "prices.yaml"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def models_of(pool) -> dict[str, tuple[str, float, float]]:
    return {agent.model.target.rsplit("#", 1)[-1]: (agent.model.target.rsplit("#", 1)[0], agent.price_in,
                                                    agent.price_out)
            for agent in pool if agent.kind == "llm"}


def test_a_replay_roster_prices_recorded_models_from_the_shipped_list() -> None:
    pool = load_pool_for(f"replay:{MATH}")
    # The shipped list (deepseek-chat at 0.14 / 0.28) wins over LIST_PRICES (0.27 / 1.10) for replay models.
    assert LIST_PRICES["deepseek-chat"] == (0.27, 1.10)
    assert models_of(pool) == {"deepseek-chat": (str(MATH), 0.14, 0.28), "gemma-2-2b-it": (str(MATH), 0.1, 0.1)}
    default = yaml.safe_load(default_pool_path().read_text(encoding="utf-8"))
    assert sorted({agent.role for agent in pool if agent.kind == "llm"}) == sorted(default["roles"])
    assert [agent.id for agent in pool if agent.kind == "tool"] == ["tool/calculator"]
    assert len(pool) == 2 * len(default["roles"]) + 1


def test_a_roster_over_two_files_has_one_model_per_name_over_the_files_that_record_it() -> None:
    pool = load_pool_for(f"replay:{MATH},{GSM}", PRICES)
    assert models_of(pool) == {"deepseek-chat": (f"{MATH},{GSM}", 1.0, 2.0),   # the given list first
                               "gemma-2-2b-it": (str(MATH), 0.1, 0.1),          # then the shipped one
                               "mystery-model": (str(GSM), 0.5, 0.25)}
    assert pool.name == "replay-math_mini+gsm_mini"
    one = load_pool_for(f"replay:{MATH},{GSM}#deepseek-chat")
    assert set(models_of(one)) == {"deepseek-chat"}


def test_a_model_without_a_price_is_an_error_naming_it() -> None:
    with pytest.raises(PoolError, match=r"no price known for model 'replay:.*gsm_mini\.jsonl#mystery-model'"):
        load_pool_for(f"replay:{MATH},{GSM}")
    with pytest.raises(PoolError, match=r"no recordings for model 'nobody'"):
        load_pool_for(f"replay:{MATH}#nobody")


def test_price_lists_are_validated_naming_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("models:\n  m: {input: 1}\n", encoding="utf-8")
    with pytest.raises(PriceListError, match=r"bad\.yaml: field 'models\.m\.output': Field required"):
        load_price_list(bad)
    with pytest.raises(PoolError, match=r"field 'prices': .*none\.yaml: price list not found"):
        load_pool_for(f"replay:{MATH}", tmp_path / "none.yaml")


def test_a_pool_file_with_prices_is_written_with_absolute_paths(tmp_path: Path) -> None:
    folder = tmp_path / "pools"
    folder.mkdir()
    (folder / "gsm.jsonl").write_bytes(GSM.read_bytes())
    (folder / "p.yaml").write_text(yaml.safe_dump({
        "models": [{"spec": "replay:gsm.jsonl#mystery-model"}], "roles": ["Algebra"]}), encoding="utf-8")
    with pytest.raises(PoolError, match="mystery-model"):
        load_pool(folder / "p.yaml")
    written = Path(pool_file_for(str(folder / "p.yaml"), PRICES, tmp_path / "out"))
    assert written.parent == tmp_path / "out"
    assert models_of(load_pool(written)) == {"mystery-model": (str((folder / "gsm.jsonl").resolve()), 0.5, 0.25)}
    assert pool_file_for(str(folder / "p.yaml"), PRICES, tmp_path / "out") == str(written)  # named by content
    assert pool_file_for(str(folder / "p.yaml"), None, tmp_path / "out") == str(folder / "p.yaml")
    assert pool_file_for(None, None, tmp_path / "out") == ""


def test_pool_show_takes_replay_files_and_prices() -> None:
    result = invoke("pool", "show", f"replay:{MATH},{GSM}", "--prices", str(PRICES), "--json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)["agents"]
    assert {row["model"].rsplit("#", 1)[-1]: (row["price_in"], row["price_out"]) for row in rows} == {
        "deepseek-chat": (1.0, 2.0), "gemma-2-2b-it": (0.1, 0.1), "mystery-model": (0.5, 0.25),
        "tool:calculator": (0.0, 0.0)}
    refused = invoke("pool", "show", f"replay:{MATH},{GSM}")
    assert refused.exit_code == 2
    assert refused.stderr.strip().splitlines() == [refused.stderr.strip()]
    assert "no price known for model" in refused.stderr and "mystery-model" in refused.stderr


# The price list: `reso solve --prices`, `reso demo --set demo.prices=…`, `reso eval --set run.prices=…`.
PRICES_KEY = {"solve": "--prices", "demo": "demo.prices", "eval": "run.prices"}


@pytest.mark.parametrize("command", [("solve", "What is 2+2?"), ("demo", "--set", "demo.train_limit=1"),
                                     ("eval", "--dataset", "gsm8k", "--limit", "1", "--quiet")])
def test_every_command_with_a_pool_takes_prices(tmp_path: Path, command: tuple[str, ...]) -> None:
    out = ("--out", str(tmp_path / "run")) if command[0] != "solve" else ()
    key, missing = PRICES_KEY[command[0]], tmp_path / "none.yaml"
    prices = (key, str(missing)) if key.startswith("--") else ("--set", f"{key}={missing}")
    result = invoke(*command, *out, "--pool", f"replay:{MATH},{GSM}", *prices)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "none.yaml: price list not found" in result.stderr and "Traceback" not in result.stderr
    unpriced = invoke(*command, *out, "--pool", f"replay:{MATH},{GSM}")
    assert unpriced.exit_code == 2 and "mystery-model" in unpriced.stderr


def test_the_curated_pool_loads_and_every_model_has_a_listed_price() -> None:
    pool = load_pool(zeroeval_pool_path())
    listed = load_price_list(vendored_prices_path())
    math, gsm = (replay_table(zeroeval_pool_path().parent / name)
                 for name in ("math_l5_dev.jsonl.gz", "gsm8k_dev.jsonl.gz"))
    models = models_of(pool)
    assert len(models) == 12 and len(pool) == 12 * 4 + 1
    for model, (files, price_in, price_out) in models.items():
        assert (price_in, price_out) == listed.get(model), model
        assert model in math.models and model in gsm.models
        assert files.endswith("math_l5_dev.jsonl.gz," + str(zeroeval_pool_path().parent / "gsm8k_dev.jsonl.gz"))
    assert {agent.role for agent in pool if agent.kind == "llm"} == {
        "Algebra", "Probability and Statistics", "Geometry", "Arithmetic Word Problems"}
    prices = sorted((price_in + price_out) / 2 for _, price_in, price_out in models.values())
    assert prices[0] <= 0.1 and prices[-1] >= 9  # spans the price range


def test_the_all_models_pool_holds_every_recorded_model_replaying_the_files_that_record_it() -> None:
    pool = load_pool(all_models_pool_path())
    folder = all_models_pool_path().parent
    math, gsm = (replay_table(folder / name) for name in ("math_l5_dev.jsonl.gz", "gsm8k_dev.jsonl.gz"))
    models = models_of(pool)
    assert set(models) == set(math.models) | set(gsm.models) and len(models) == 54
    assert len(pool) == 54 * 4 + 1 and len({agent.id for agent in pool}) == len(pool)
    curated = load_pool(zeroeval_pool_path())
    assert {a.role for a in pool if a.kind == "llm"} == {a.role for a in curated if a.kind == "llm"}
    for model, (files, _, _) in models.items():
        expected = [str(folder / name) for name, table in (("math_l5_dev.jsonl.gz", math), ("gsm8k_dev.jsonl.gz", gsm))
                    if model in table.models]
        assert files.removeprefix("replay:").split(",") == expected, model
    assert set(models_of(curated)) < set(models)


def test_the_vendored_files_cover_the_documented_questions_and_models() -> None:
    math = replay_table(zeroeval_pool_path().parent / "math_l5_dev.jsonl.gz")
    gsm = replay_table(zeroeval_pool_path().parent / "gsm8k_dev.jsonl.gz")
    assert (len(math), len(math.models), len(gsm), len(gsm.models)) == (438, 40, 1000, 42)
    listed = load_price_list(vendored_prices_path())
    assert set(math.models) | set(gsm.models) <= set(listed.prices)
    o1 = sum("o1-mini-2024-09-12" in rec.responses for rec in math.recordings)
    assert o1 == 412
