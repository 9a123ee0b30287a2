"""`python -m memeval.evaluation.judge_check ...`: the old form of `memeval judge-check` (cli/judge_check.py).

The command builds the judge from the run config, above the harness, so it lives in cli/; this
package keeps only the entry point (`__main__.py`). Each family's label-set code stays in
evaluation/epbench/judge_check.py and evaluation/conversations/judge_check.py.
"""
