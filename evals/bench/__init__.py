"""Benchmarks behind `reso bench …` (`cli.py`), each printing JSON that measures ratios side by side in one run.

- `eval.py`: the batch runner's throughput against the ideal time for its concurrency.
- `dag.py`: the engine's wall time against each question's critical path, with its overhead per subtask.
- `scale.py`: the Ray backend's throughput with 1, 2 and 4 workers on a two-node local cluster.
- `selection.py`: per-subtask selection time, FAISS + vectorised bandit score against the authors' per-agent loop
  (re-implemented in `paper_loop.py`).
- `routing.py`: how fast each selection policy learns to route subtasks to the best agent.
- `faults.py`: ReSo with every LLM model behind a fault injector, at several fault rates.
- `crm.py`: batched against one-at-a-time PRM scoring; `crm_gpu.py` the same in tokens per second on a GPU
  (`python -m reso.evals.bench.crm_gpu`), both on `synthetic_prm.py`'s randomly initialised models.
- `startup.py`: how soon `reso solve` shows its first progress line, beside Python's own start.
"""
