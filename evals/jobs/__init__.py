"""The offline main job, `reso demo` (its command is `reso.evals.cli.demo`), and what only it uses.

- `demo.py`: the job itself (`run_demo`, `run_benchmark`); its docstring gives the protocol.
- `fine_stages.py`, `validation.py`: the fine stages compared, and the one chosen on a validation part of the
  training side.
- `benchmark_pool.py`: each benchmark's roster, less the replay models that record too few of its questions.
- `recorded_benchmark.py`: a benchmark of linked composites from a user's own recordings.
- `events.py`: what the job reports while it runs (`DemoProgress`).

Only the CLI and the tests import this package: nothing in the runtime packages or elsewhere in `reso.evals`.
"""
