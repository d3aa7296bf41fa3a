"""`reso bench crm` and the GPU script, run at smoke sizes on the CPU (values, not timings, are checked)."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from reso.evals.bench import crm_gpu
from reso.evals.bench.crm import padded_tokens
from reso.evals.bench.synthetic_prm import QWEN2_0_5B_SIZE, qwen2_prm_config
from reso.evals.cli import app


def _check_report(report: dict, batch_size: int, n: int) -> None:
    assert report["batch_size"] == batch_size and report["n"] == n
    assert report["speedup"] == pytest.approx(report["single"]["seconds_median"]
                                              / report["batched"]["seconds_median"])
    assert report["tokens_per_s_batched"] == pytest.approx(report["tokens"] / report["batched"]["seconds_median"])
    assert report["tokens_per_s_single"] == pytest.approx(report["tokens"] / report["single"]["seconds_median"])
    assert report["max_abs_score_diff"] <= 1e-5  # float32 on the CPU: batching does not change scores
    assert report["padding_overhead"] >= 0.0


def test_bench_crm_cli_prints_one_json_object_last() -> None:
    result = CliRunner().invoke(app, ["bench", "crm", "--smoke", "--n", "5", "--batch-size", "2",
                                      "--repeats", "1", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    _check_report(report, batch_size=2, n=5)
    assert report["device"] == "cpu" and report["dtype"] == "float32"
    assert len(report["batched"]["seconds"]) == 1


def test_gpu_script_smoke_runs_on_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    assert crm_gpu.main(["--smoke", "--json", "--n", "4", "--batch-size", "2", "--repeats", "1"]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    _check_report(report, batch_size=2, n=4)
    assert report["device"] == "cpu" and report["smoke"] is True


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without CUDA")
def test_gpu_script_refuses_without_cuda() -> None:
    with pytest.raises(SystemExit, match="no CUDA GPU"):
        crm_gpu.run_gpu_bench(device="cuda")


def test_gpu_model_has_half_a_billion_parameters() -> None:
    from transformers import Qwen2ForTokenClassification

    config = qwen2_prm_config(QWEN2_0_5B_SIZE, vocab_size=1025)
    with torch.device("meta"):
        model = Qwen2ForTokenClassification(config)
    assert config.vocab_size == 151_936 and model.score.out_features == 2
    assert 0.45e9 < sum(p.numel() for p in model.parameters()) < 0.55e9


def test_padded_tokens_counts_length_sorted_batches() -> None:
    assert padded_tokens([5, 3, 4, 1], 2) == 5 * 2 + 3 * 2
    assert padded_tokens([5, 3, 4, 1], 1) == 13
