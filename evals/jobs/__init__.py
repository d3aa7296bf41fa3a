"""The offline main job, `reso demo` (its command is `reso.evals.cli.demo`), and what only it uses.

- `demo.py`: the job itself, benchmark by benchmark (`run_demo`, `run_benchmark`); its docstring gives the
  protocol.
- `config.py`: the worlds and their benchmarks, ReSo's fixed test settings, the CRMs, `DemoConfig`.
- `runs.py`: one run into its folder, resumed where it stopped, and the runs a benchmark plans.
- `baselines.py`: the votes and the cascade chosen from the training record.
- `crm_fit.py`, `crm_background.py`: the CRM fitted on the training split; the general CRM, fitted in a
  second process.
- `fine_stages.py`, `validation.py`: the fine stages compared, and the one chosen on a validation part of the
  training side.
- `benchmark_pool.py`: each benchmark's roster, less the replay models that record too few of its questions.
- `recorded_benchmark.py`: a benchmark of linked composites from a user's own recordings.
- `comparison.py`: the tables and `comparison.json`.
- `events.py`: what the job reports while it runs (`DemoProgress`).

Nothing in the runtime packages or elsewhere in `reso.evals` imports this package, only the CLI and the tests.
"""
