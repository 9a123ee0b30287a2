"""Run health: model-free checks that say when a run's numbers mean nothing.

Four scopes (ARCHITECTURE.md, "Run health"): the index (counts each method makes of its own
index folder, handed in as plain data: evaluation/ never imports methods/), the contexts, the
answers and the judge. `check_run` reads one run folder and returns a `Health`
(evaluation/runs/health_file.py writes and reads health.json); the thresholds are a plain dict
(conf/health/default.yaml, `memeval.evaluation.runs.health_file.load_thresholds`). `memeval health RUN_DIR...` (cli/health.py) and
the score stage (harness/health.py) call it.
"""
