"""Judge checks, from metrics.json and judgments.jsonl.

- kappa: the judge's Cohen's kappa with the model-free rater: metrics.json's `agreement` block
  where the protocol writes one (EpBench: item credit vs the deterministic matcher), else the
  judgments' verdicts vs their grounding check (LoCoMo: `correct` vs `grounded`), over the
  lines whose verdict the judge model gave (`Protocol.judge_called`);
- failed: judgments that failed (metrics.json `n_judge_failed`);
- false_accept: the judge's false-accept rate on known-wrong answers where a calibration was
  measured (metrics.json `judge_calibration.false_accept_rate`, the run's judge_check.json, or
  the committed calibration of its judge, evaluation/calibration.py);
  otherwise "not measured";
- grounding: how many grounding versions the run's scoring is behind its protocol's current one
  (`Protocol.current_grounding`): each version closed a way a local judge inflated credit, so
  an older run's numbers are not comparable with a new one's until it is judged again.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..agreement import cohen_kappa
from ..calibration import measured_for, overall_rate
from ..runs.health_file import Check
from .grading import check, not_measured, pct, share

SCOPE = "judge"


def kappa_of(metrics: dict[str, Any], judgments: list[dict[str, Any]],
             judge_called: Callable[[dict[str, Any]], bool]) -> tuple[float | None, int, str]:
    """(kappa, items rated, against what)."""
    block = metrics.get("agreement")
    if isinstance(block, dict) and "kappa" in block:
        k = block.get("kappa")
        return (None if k is None or (isinstance(k, float) and math.isnan(k)) else float(k),
                int(block.get("n_items") or 0), f"the deterministic matcher ({block.get('credit', '?')} credit)")
    pairs = [(int(j["correct"]), int(bool(j["grounded"]))) for j in judgments
             if "correct" in j and "grounded" in j and "judge_error" not in j and judge_called(j)]
    if not pairs:
        return None, 0, "no model-free rater"
    k = cohen_kappa([a for a, _ in pairs], [b for _, b in pairs])
    return (None if math.isnan(k) else k), len(pairs), "the grounding check"


def false_accept(run: Path, metrics: dict[str, Any]) -> tuple[float | None, str]:
    for source, block in (("metrics.json", metrics.get("judge_calibration")),
                          ("judge_check.json", _read(run / "judge_check.json"))):
        if isinstance(block, dict) and block.get("false_accept_rate") is not None:
            n = block.get("n_known_wrong") or block.get("n")
            return float(block["false_accept_rate"]), f"{source}" + (f", {n} known-wrong answers" if n else "")
    prov = metrics.get("provenance") if isinstance(metrics.get("provenance"), dict) else {}
    family = (prov.get("protocol") or {}).get("protocol") if isinstance(prov.get("protocol"), dict) else None
    entry = measured_for(str(family), prov, metrics.get("judge_prompt"), str(metrics.get("credit")))
    measured = overall_rate(entry) if entry else None
    if measured is not None:
        return measured[0], (f"judge-check --known-wrong of {str(entry.get('measured_at', '?'))[:10]}, "
                             f"{measured[1]} known-wrong answers")
    return None, ""


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def grounding_check(metrics: dict[str, Any], current: int | None, limits: dict[str, Any]) -> Check:
    """The run's grounding version against the protocol's current one (metrics.json provenance)."""
    prov = metrics.get("provenance") if isinstance(metrics.get("provenance"), dict) else {}
    proto = prov.get("protocol") if isinstance(prov.get("protocol"), dict) else {}
    version = proto.get("grounding_version")
    if current is None or not isinstance(version, int):
        return not_measured("judge_grounding", SCOPE, limits, "the protocol has no grounding versions")
    behind = max(current - version, 0)
    if not behind:
        return check("judge_grounding", SCOPE, 0, limits, f"scored under grounding version {version}, the current one")
    return check("judge_grounding", SCOPE, behind, limits,
                 f"scored under grounding version {version}, {behind} behind the current {current}: "
                 f"`memeval regrade RUN_DIR --set dataset.protocol.grounding_version={current}` rescores it "
                 "from the cache (no model call) before comparing it with a new run")


def judge_checks(run: Path, metrics: dict[str, Any], judgments: list[dict[str, Any]],
                 judge_called: Callable[[dict[str, Any]], bool], th: dict[str, Any],
                 current_grounding: int | None = None) -> list[Check]:
    k, n_items, against = kappa_of(metrics, judgments, judge_called)
    limits = th["kappa"]
    if k is None:
        out = [not_measured("judge_kappa", SCOPE, limits, f"kappa undefined ({n_items} items vs {against})")]
    elif n_items < int(limits.get("min_items", 0)):
        out = [check("judge_kappa", SCOPE, round(k, 4), limits,
                     f"kappa {k:.2f} vs {against} on only {n_items} items: reported, not judged", status="ok")]
    else:
        out = [check("judge_kappa", SCOPE, round(k, 4), limits, f"kappa {k:.2f} vs {against}, {n_items} items",
                     low_is_bad=True)]
    failed = int(metrics.get("n_judge_failed") or 0)
    out.append(check("judge_failures", SCOPE, share(failed, len(judgments)), th["failed"],
                     f"{pct(failed, len(judgments))} judgments failed"))
    rate, source = false_accept(run, metrics)
    if rate is None:
        out.append(not_measured("judge_false_accepts", SCOPE, th["false_accept"], "not measured"))
    else:
        out.append(check("judge_false_accepts", SCOPE, round(rate, 4), th["false_accept"],
                         f"false-accept rate {rate:.2f} ({source})"))
    out.append(grounding_check(metrics, current_grounding, th.get("grounding", {"warn": 0})))
    return out
