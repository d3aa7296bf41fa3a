"""GPU benchmark: tokens per second of a 0.5B-parameter random Qwen2 PRM in bf16, batched vs one at a time.

Run on a machine with a CUDA GPU:

    python -m reso.evals.bench.crm_gpu --json

The model has Qwen2-0.5B's shape (hidden 896, 24 layers, 14 heads with 2 KV heads, intermediate 4,864,
vocabulary 151,936) with a two-class token-classification head, randomly initialised directly on the GPU
(nothing is downloaded). It scores the same synthetic answers through `ProcessRewardScorer` at batch size
16 and at batch size 1, alternating, median of the repeats (`measure_side_by_side`). With the defaults
(128 answers of a few hundred tokens, 3 repeats) it finishes well inside five minutes on one modern GPU.
`--smoke` runs the tiny test model on the CPU so that a unit test can exercise the script.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from reso.evals.bench.crm import measure_side_by_side
from reso.evals.bench.synthetic_prm import (
    QWEN2_0_5B_SIZE,
    TEST_SIZE,
    build_tokenizer,
    qwen2_prm_config,
    synthetic_items,
)
from reso.reward.prm import ProcessRewardScorer
from reso.reward.prm_loading import moved


def run_gpu_bench(*, batch_size: int = 16, n: int = 128, repeats: int = 3, device: str = "cuda",
                  smoke: bool = False, seed: int = 0) -> dict[str, Any]:
    """Build the model on `device`, then time batched against one-at-a-time scoring.

    Args:
        batch_size: The batched mode's batch size.
        n: Answers per timed pass.
        repeats: Timed passes per mode.
        device: "cuda" (bf16) or, with `smoke`, "cpu" (float32).
        smoke: The tiny test model and short answers, for a quick check anywhere.
        seed: Seed of the weights and the answers.

    Raises:
        SystemExit: CUDA requested on a machine without it.
    """
    import torch
    from transformers import Qwen2ForTokenClassification

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("crm_gpu: no CUDA GPU on this machine (use --smoke --device cpu for a CPU check)")
    size, sentences = (TEST_SIZE, (1, 3)) if smoke else (QWEN2_0_5B_SIZE, (12, 24))
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    tokenizer = build_tokenizer()
    config = qwen2_prm_config(size, vocab_size=len(tokenizer))
    config.pad_token_id = tokenizer.pad_token_id
    started = time.perf_counter()
    torch.manual_seed(seed)
    with torch.device(device):
        model = moved(Qwen2ForTokenClassification(config), dtype=dtype).eval()
    build_s = time.perf_counter() - started
    scorer = ProcessRewardScorer.from_model(model, tokenizer, name="prm:random-qwen2-0.5b", device=device,
                                            dtype=dtype, batch_size=batch_size)
    items = synthetic_items(n, sentences=sentences, seed=seed)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    result = measure_side_by_side(scorer, items, batch_size=batch_size, repeats=repeats,
                                  progress=lambda line: print(line, file=sys.stderr, flush=True))
    on_gpu = device.startswith("cuda")
    return {
        "bench": "crm_gpu",
        **result,
        "device": torch.cuda.get_device_name(scorer.device) if on_gpu else "cpu",
        "dtype": str(dtype).removeprefix("torch."),
        "model": size.description + f", vocabulary {config.vocab_size}",
        "parameters": sum(parameter.numel() for parameter in model.parameters()),
        "peak_memory_gib": torch.cuda.max_memory_allocated(scorer.device) / 2**30 if on_gpu else None,
        "model_build_s": build_s,
        "total_s": time.perf_counter() - started,
        "smoke": smoke,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reso.evals.bench.crm_gpu", description=__doc__.split("\n")[0])
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--n", type=int, default=128, help="answers per timed pass")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default=None, help="default: cuda, or cpu with --smoke")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="tiny model, short answers (CPU is fine)")
    parser.add_argument("--json", action="store_true", help="print only the JSON object")
    args = parser.parse_args(argv)
    if args.batch_size < 1 or args.n < 1 or args.repeats < 1:
        parser.error("--batch-size, --n and --repeats must be at least 1")
    device = args.device or ("cpu" if args.smoke else "cuda")
    report = run_gpu_bench(batch_size=args.batch_size, n=args.n, repeats=args.repeats, device=device,
                           smoke=args.smoke, seed=args.seed)
    if not args.json:
        print(f"{report['model']} ({report['parameters'] / 1e6:.0f}M parameters) on {report['device']}: "
              f"{report['tokens_per_s_batched']:.0f} tokens/s at batch {report['batch_size']}, "
              f"{report['tokens_per_s_single']:.0f} one at a time, speedup {report['speedup']:.2f}x")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
