"""Precision and recall of the support check on the hand labels, per claim threshold.

Reads evaluation/judge_meta/support_labels.jsonl (or --labels FILE), loads each labelled run's
benchmark data from its bundled run folder (results/<bundle>/runs/<dataset>/<run>), scores every
labelled claim against its source units as `memeval health` does, and prints precision and recall
of "unsupported" and the accuracy at each threshold tried, the configured one marked.

    memeval audit support-calibration
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from memeval.evaluation.health.support_calibration import score_labels, table
from memeval.evaluation.runs.health_file import load_thresholds
from memeval.evaluation.runs.upgrade import saved_dataset
from memeval.paths import PACKAGE, ROOT

TRIED = [0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.34, 0.4, 0.5]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--labels", type=Path, default=PACKAGE / "evaluation/judge_meta/support_labels.jsonl")
    args = ap.parse_args(argv)
    labels = [json.loads(line) for line in args.labels.read_text().splitlines() if line.strip()]
    corpora: dict[Any, Any] = {}
    for bundle, dataset, run in sorted({(lab["bundle"], lab["dataset"], lab["run"]) for lab in labels}):
        folder = ROOT / "results" / bundle / "runs" / dataset / run
        if not folder.is_dir() or any(k[0] == dataset for k in corpora):
            continue
        data = saved_dataset(folder, as_indexed=True)
        if data is not None:
            corpora.update({(dataset, str(cid)): c for cid, c in data.corpora.items()})
    th = load_thresholds()["index"]["unsupported_claims"]
    print(f"{len(labels)} labels ({sum(lab['label'] == 'unsupported' for lab in labels)} unsupported); "
          f"configured claim_share {th['claim_share']}")
    print(table(score_labels(labels, corpora, th, TRIED)))
    return 0
