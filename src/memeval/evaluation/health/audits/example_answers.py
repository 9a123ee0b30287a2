"""Count a run's answers that copy its answer prompt's own example (LoCoMo: "The week before 9 June
2023"), the health check `prompt_example_answers`, optionally on the questions of another run only,
so that a subset rerun and the full run it repeats are compared on the same questions.

    memeval audit example-answers results/locomo-local/runs/locomo/gsw-100438aae4
    memeval audit example-answers OLD_RUN NEW_RUN --on NEW_RUN     # both on NEW_RUN's questions
"""

from __future__ import annotations

import argparse
from pathlib import Path

from memeval.evaluation.health.answer import copied_example
from memeval.evaluation.health.run import prompt_examples
from memeval.evaluation.runs.folder import read_jsonl_file


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--on", type=Path, default=None, help="count only the questions this run answered")
    args = ap.parse_args(argv)
    keep = {p["question_id"] for p in read_jsonl_file(args.on / "predictions.jsonl")} if args.on else None
    for run in args.runs:
        examples = prompt_examples(run)  # the example of the prompt version this run was sent
        preds = [p for p in read_jsonl_file(run / "predictions.jsonl") if keep is None or p["question_id"] in keep]
        copied = [p for p in preds  # the health check's own rule: states the example its context lacks
                  if copied_example(str(p.get("answer") or ""), str(p.get("context_text") or ""), examples)]
        by_cat: dict[str, int] = {}
        for p in copied:
            by_cat[str(p.get("category", "-"))] = by_cat.get(str(p.get("category", "-")), 0) + 1
        print(f"{run}: {len(copied)} of {len(preds)} answers copy the answer prompt's example "
              f"{examples} (by category: {dict(sorted(by_cat.items()))})")
    return 0
