"""Judge checks, from metrics.json and judgments.jsonl.

- kappa: the LLM judge's own verdicts, before any grounding, against the model-free rater, by
  Cohen's kappa: EpBench's raw item credit vs the deterministic matcher (metrics.json
  `agreement`, its raw credit's part: evaluation.agreement.judge_block), else the judgments
  themselves (an item judge's `matching_score` vs its `deterministic` one; a verdict judge's
  `correct` vs its `grounded` check: LoCoMo, LongMemEval, custom), over the lines whose verdict
  the judge model gave (`Protocol.judge_called`). The message adds how many of the items the
  rater finds absent the judge credited, and the headline credit's agreement with the rater,
  which is never graded: grounded credit is partly built from that rater, so it agrees with it
  by construction (EpBench's grounded credit did at kappa 0.82-0.95 while its judge sat at 0.00-0.22);
- label_kappa: the judge's raw verdicts against hand labels, where the run holds a label check
  of its judge (`memeval judge-check --json RUN_DIR/judge_check.json`), else not measured;
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agreement import cohen_kappa, credited_absent, judge_block
from ..calibration import measured_for, overall_rate
from ..runs.health_file import Check
from .grading import check, not_measured, pct, share

SCOPE = "judge"
MATCHER = "the deterministic matcher"
GROUNDING = "the grounding check"


@dataclass(frozen=True)
class Rating:
    """The judge's raw verdicts against a model-free rater (kappa None: undefined or absent)."""

    kappa: float | None
    n_items: int
    against: str
    absent: dict[str, int] | None = None  # credited_absent: {"n", "judge_credited"}
    credit: str = ""  # the headline credit's agreement with the rater: reported beside, never graded


def _finite(k: Any) -> float | None:
    return None if k is None or (isinstance(k, float) and math.isnan(k)) else float(k)


def _credit_note(block: dict[str, Any]) -> str:
    credit = block.get("credit", "?")
    if credit == "raw" or _finite(block.get("kappa")) is None:
        return ""
    return (f"the headline's {credit} credit agrees with the matcher at kappa {block['kappa']:.2f}, "
            "partly by construction (grounding reads the matcher): reported, not graded")


def _item_pairs(judgments: list[dict[str, Any]],
                judge_called: Callable[[dict[str, Any]], bool]) -> list[tuple[float, float]]:
    """(judge's raw credit, matcher's credit) per gold item of the lines an item matcher rated."""
    out = []
    for j in judgments:
        det = j.get("deterministic")
        if not isinstance(det, dict) or "judge_error" in j or not judge_called(j) or "matching_score" not in j:
            continue
        out += [(float(a), float(b)) for a, b in zip(j["matching_score"], det.get("matching_score") or [],
                                                    strict=False)]
    return out


def rating(metrics: dict[str, Any], judgments: list[dict[str, Any]],
           judge_called: Callable[[dict[str, Any]], bool]) -> Rating:
    """The judge's raw verdicts against the model-free rater (see the module docstring)."""
    block = metrics.get("agreement")
    judge = judge_block(block)
    if judge is not None and isinstance(block, dict):
        absent = credited_absent(_item_pairs(judgments, judge_called))  # lines that carry the matcher
        return Rating(_finite(judge.get("kappa")), int(judge.get("n_items") or 0), MATCHER,
                      absent if absent.get("n") else None, _credit_note(block))
    items = _item_pairs(judgments, judge_called)
    verdicts = [(float(j["correct"]), float(bool(j["grounded"]))) for j in judgments
                if "correct" in j and "grounded" in j and "judge_error" not in j and judge_called(j)]
    pairs = items + verdicts
    if not pairs:
        return Rating(None, 0, "no model-free rater")
    against = " and ".join(w for w, on in ((MATCHER, items), (GROUNDING, verdicts)) if on)
    credit = ""
    if verdicts and metrics.get("credit") == "grounded":
        headline = [(int(j["correct_grounded"]), int(bool(j["grounded"]))) for j in judgments
                    if "correct_grounded" in j and "grounded" in j and "judge_error" not in j and judge_called(j)]
        k = _finite(cohen_kappa([a for a, _ in headline], [b for _, b in headline])) if headline else None
        if k is not None:
            credit = (f"the headline's grounded verdict agrees with the grounding check at kappa {k:.2f}, by "
                      "construction (it is the judge's verdict and the check): reported, not graded")
    absent = credited_absent(pairs)
    return Rating(_finite(cohen_kappa([a for a, _ in pairs], [b for _, b in pairs])), len(pairs), against,
                  absent if absent["n"] else None, credit)


def _kappa_message(r: Rating, verdict: str = "") -> str:
    """The kappa, what the judge credited that the rater rejects, `verdict` (why it is not
    graded), then the headline credit's agreement (never graded)."""
    what = (f"the judge's raw verdicts vs {r.against}: kappa {r.kappa:.2f}, {r.n_items} items"
            if r.kappa is not None else f"kappa undefined ({r.n_items} items vs {r.against})")
    if r.absent:
        found = {MATCHER: "credited {} gold items the matcher finds absent from the answer",
                 GROUNDING: "accepted {} answers the grounding check rejects"}.get(
                     r.against, f"credited {{}} items {r.against} rejects")
        what += "; the judge " + found.format(pct(r.absent["judge_credited"], r.absent["n"]))
    return what + (f": {verdict}" if verdict else "") + (f"; {r.credit}" if r.credit else "")


def kappa_check(r: Rating, limits: dict[str, Any]) -> Check:
    """judge_kappa: graded low-is-bad on enough items; not measured when undefined or too few."""
    if r.kappa is None:
        return not_measured("judge_kappa", SCOPE, limits, _kappa_message(r))
    if r.n_items < int(limits.get("min_items", 0)):
        return not_measured("judge_kappa", SCOPE, limits, _kappa_message(r, "too few items to judge"))
    return check("judge_kappa", SCOPE, round(r.kappa, 4), limits, _kappa_message(r), low_is_bad=True)


def label_kappa_check(run: Path, limits: dict[str, Any]) -> Check:
    """judge_label_kappa: the raw judge against hand labels, from the run's judge_check.json (the
    `memeval judge-check --json` file of the run's judge: `overall.raw.kappa`)."""
    data = _read(run / "judge_check.json")
    raw = ((data.get("overall") or {}).get("raw") if isinstance(data, dict) else None) or {}
    k = _finite(raw.get("kappa"))
    if k is None:
        return not_measured("judge_label_kappa", SCOPE, limits,
                            "no hand-label check of the run's judge (`memeval judge-check --json "
                            "RUN_DIR/judge_check.json` measures it)")
    n = int(raw.get("n_credits") or raw.get("n") or 0)
    what = f"the judge's raw verdicts vs the hand labels: kappa {k:.2f}, {n} labels ({data.get('judge', '?')})"
    if n < int(limits.get("min_items", 0)):
        return not_measured("judge_label_kappa", SCOPE, limits, f"{what}: too few labels to judge")
    return check("judge_label_kappa", SCOPE, round(k, 4), limits, what, low_is_bad=True)


def false_accept(run: Path, metrics: dict[str, Any]) -> tuple[float | None, str]:
    for source, block in (("metrics.json", metrics.get("judge_calibration")),
                          ("judge_check.json", _read(run / "judge_check.json"))):
        if isinstance(block, dict) and block.get("false_accept_rate") is not None:
            n = block.get("n_known_wrong") or block.get("n")
            return float(block["false_accept_rate"]), f"{source}" + (f", {n} known-wrong answers" if n else "")
    prov: dict[str, Any] = metrics["provenance"] if isinstance(metrics.get("provenance"), dict) else {}
    family = (prov.get("protocol") or {}).get("protocol") if isinstance(prov.get("protocol"), dict) else None
    entry = measured_for(str(family), prov, metrics.get("judge_prompt"), str(metrics.get("credit")))
    measured = overall_rate(entry) if entry else None
    if measured is not None and entry is not None:
        return measured[0], (f"judge-check --known-wrong of {str(entry.get('measured_at', '?'))[:10]}, "
                             f"{measured[1]} known-wrong answers")
    return None, ""


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def grounding_check(metrics: dict[str, Any], current: int | None, limits: dict[str, Any]) -> Check:
    """The run's grounding version against the protocol's current one (metrics.json provenance)."""
    prov: dict[str, Any] = metrics["provenance"] if isinstance(metrics.get("provenance"), dict) else {}
    proto: dict[str, Any] = prov["protocol"] if isinstance(prov.get("protocol"), dict) else {}
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
    out = [kappa_check(rating(metrics, judgments, judge_called), th["kappa"]),
           label_kappa_check(run, th["kappa"])]
    failed = int(metrics.get("n_judge_failed") or 0)
    out.append(check("judge_failures", SCOPE, share(failed, len(judgments)), th["failed"],
                     f"{pct(failed, len(judgments))} judgments failed"))
    rate, source = false_accept(run, metrics)
    if rate is None:
        out.append(not_measured("judge_false_accepts", SCOPE, th["false_accept"],
                                "no false-accept rate measured for this judge (`memeval judge-check "
                                "--known-wrong` measures it where a known-wrong set exists)"))
    else:
        out.append(check("judge_false_accepts", SCOPE, round(rate, 4), th["false_accept"],
                         f"false-accept rate {rate:.2f} ({source})"))
    out.append(grounding_check(metrics, current_grounding, th.get("grounding", {"warn": 0})))
    return out
