"""Per question, per method: the table's row cells and the question page's detail, read from
predictions.jsonl, judgments.jsonl, the failure labels (upgrade.question_diagnostics) and the
protocol's own per-question score (Run.question_scores).

Contexts are split into their `### ` blocks and each block stored once (TextStore): Vanilla
sends the whole corpus to every question, so the same blocks would otherwise be written once per
question. A block's header names its unit ("Chapter 7", "Session 3 (date)", "11: entity"), which
is how the page highlights the gold units without the corpus itself.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from ..retrieval_diagnostics import LABELS, UNSEEN
from ..runs.scored import Run
from ..runs.upgrade import question_diagnostics

NO_LABEL = "no label"
LABEL_ORDER = (*LABELS, UNSEEN, NO_LABEL)
# bit flags of a table cell (the page's filter names them)
FLAGS = {"empty context": 1, "text beyond reported units": 2, "units dropped at the cap": 4,
         "judge failed": 8, "health check": 16}
ANSWER_SNIPPET = 300  # characters of each answer the table holds for its text search
# prediction fields that are a method's output, never a question attribute
OUTPUT_KEYS = {"answer", "answered_by", "context_text", "context_tokens", "question", "question_id"}
MAX_ATTR_VALUES = 24
_BLOCK = re.compile(r"(?m)^(?=### )")
_AFTER = (" ", ":", "(", ",", "-", ".", ")")
_JUDGE_SKIP = {"question_id", "gold", "failure_label", "gold_recall", "all_gold_present", "gold_token_share"}


class TextStore:
    """Each distinct context block once; ids in order of first use (so a rebuild is identical)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.texts: list[str] = []

    def add(self, text: str) -> int:
        key = hashlib.sha1(text.encode("utf-8")).hexdigest()
        if key not in self.ids:
            self.ids[key] = len(self.texts)
            self.texts.append(text)
        return self.ids[key]


def header_unit(header: str, units: list[str]) -> str | None:
    """The unit a block header names: its id first, or after one leading word ("Chapter 7")."""
    heads = [header]
    first, _, rest = header.partition(" ")
    if rest and first.isalpha():
        heads.append(rest)
    for head in heads:
        for u in sorted(units, key=len, reverse=True):
            if head.startswith(u) and (len(head) == len(u) or head[len(u)] in _AFTER):
                return u
    return None


def context_blocks(text: str, units: list[str], gold: set[str], store: TextStore) -> list[list[Any]]:
    """[text id, unit or None, 1 if that unit is gold else 0] per block of the context."""
    out: list[list[Any]] = []
    for block in _BLOCK.split(text or ""):
        if not block:
            continue
        unit = header_unit(block[4:].split("\n", 1)[0], units) if block.startswith("### ") else None
        out.append([store.add(block), unit, int(unit is not None and unit in gold)])
    return out


def question_attributes(runs: list[Run], first: list[str]) -> list[str]:
    """The prediction fields that describe the question, not the method's output: scalars that
    are the same in every run for a question and take 2 to 24 values (bucket, category, type).
    `first` (the protocol's group field, the strata key) lead."""
    values: dict[str, dict[str, Any]] = {}
    bad: set[str] = set(OUTPUT_KEYS)
    for r in runs:
        for p in r.predictions:
            for k, v in p.items():
                if k in bad:
                    continue
                if not isinstance(v, str | int | bool) or isinstance(v, float):
                    bad.add(k)
                    continue
                seen = values.setdefault(k, {})
                if seen.setdefault(p["question_id"], v) != v:
                    bad.add(k)
    n_questions = len({p["question_id"] for r in runs for p in r.predictions})
    keep = [k for k, per_q in values.items() if k not in bad
            and 2 <= len(set(per_q.values())) <= min(MAX_ATTR_VALUES, max(n_questions - 1, 2))
            and len(per_q) == n_questions]
    ordered = [*(k for k in dict.fromkeys(first) if k in keep), *sorted(k for k in keep if k not in first)]
    out: list[str] = []
    for k in ordered:  # a field that only renames an earlier one (category_name for category) adds nothing
        if not any(_same_partition(values[k], values[j]) for j in out):
            out.append(k)
    return out


def _same_partition(a: dict[str, Any], b: dict[str, Any]) -> bool:
    pairs = {(a[q], b[q]) for q in a}
    return len(pairs) == len({x for x, _ in pairs}) == len({y for _, y in pairs})


def _finite(x: Any) -> Any:
    return None if isinstance(x, float) and not math.isfinite(x) else x


def judge_view(j: dict[str, Any] | None) -> dict[str, Any]:
    """A judgments line laid out for reading: per gold item the credit of each judge (raw LLM
    judge, grounded, deterministic matcher), question-level verdicts, the reasons, the order
    judge, and every other key as saved (so nothing a judge wrote is hidden)."""
    if j is None:
        return {"missing": True}
    used = set(_JUDGE_SKIP)
    credits = []
    for name, key, claimed in (("raw (LLM judge)", "matching_score", "identified_items"),
                               ("grounded", "matching_score_grounded", "identified_items_grounded")):
        if isinstance(j.get(key), list):
            credits.append({"name": name, "per_item": j[key], "claimed": j.get(claimed)})
            used |= {key, claimed}
    det = j.get("deterministic")
    if isinstance(det, dict) and isinstance(det.get("matching_score"), list):
        note = ", ".join(f"{k} {det[k]}" for k in ("kind", "refusal") if k in det)
        credits.append({"name": "deterministic matcher", "per_item": det["matching_score"],
                        "claimed": det.get("identified_items"), "note": note})
        used.add("deterministic")
    verdicts = []
    for name, key, reason in (("LLM judge", "correct", "reasoning"), ("grounded", "correct_grounded", "grounding")):
        if key in j:
            label = j.get("label") if key == "correct" else None
            verdicts.append({"name": name, "value": j[key], "label": label, "reason": j.get(reason)})
            used |= {key, reason, "label"}
    reasons = {k: j[k] for k in ("explanation", "unsupported_items", "credited_absent_gold", "left_to_judge",
                                 "judge_error") if k in j and j[k] not in (None, [], "")}
    used |= set(reasons)
    order = {k.removeprefix("order_"): j[k] for k in j if k.startswith("order_")}
    used |= {k for k in j if k.startswith("order_")}
    scores = {k: _finite(j[k]) for k in ("precision", "recall", "f1") if isinstance(j.get(k), int | float)}
    used |= set(scores)
    other = {k: v for k, v in j.items() if k not in used}
    return {"gold": j.get("gold"), "credits": credits, "verdicts": verdicts, "reasons": reasons,
            "order": order, "scores": scores, "other": other}


def _flags(p: dict[str, Any], j: dict[str, Any] | None, health_names: list[str]) -> list[str]:
    audit = p.get("cap_audit") or {}
    retrieval = p.get("retrieval") or {}
    found = []
    if not (p.get("context_text") or "").strip() or p.get("context_tokens") == 0:
        found.append("empty context")
    if audit.get("verbatim_beyond_units"):
        found.append("text beyond reported units")
    if retrieval.get("dropped_units") or retrieval.get("truncated"):
        found.append("units dropped at the cap")
    if j is not None and "judge_error" in j:
        found.append("judge failed")
    if health_names:
        found.append("health check")
    return found


def _retrieval_text(retrieval: Any, limit: int = 4000) -> str:
    text = json.dumps(retrieval, ensure_ascii=False, indent=1, default=str)
    return text if len(text) <= limit else text[:limit] + f"\n… [{len(text) - limit} more characters]"


def method_views(run: Run, health: dict[str, Any] | None, index: dict[str, Any],
                 store: TextStore) -> dict[str, tuple[list[Any], dict[str, Any]]]:
    """question id -> (the table cell, the question page's part) for one run."""
    judgments = {j["question_id"]: j for j in run.judgments}
    diags = question_diagnostics(run.path)
    scores = run.question_scores
    cap = run.meta.get("context_cap")
    per_q_health = (health or {}).get("questions", {})
    out = {}
    for p in run.predictions:
        qid = p["question_id"]
        j = judgments.get(qid)
        d = diags.get(qid, {})
        label = d.get("failure_label") or NO_LABEL
        score = _finite(scores.get(qid))
        units = [str(u) for u in p.get("context_chapters") or []]
        gold_units = {str(u) for u in p.get("gold_units") or []}
        names = per_q_health.get(qid, [])
        flags = _flags(p, j, names)
        answer = str(p.get("answer") or "")
        cell = [score, LABEL_ORDER.index(label) if label in LABEL_ORDER else len(LABEL_ORDER) - 1,
                sum(FLAGS[f] for f in flags), p.get("context_tokens"), answer[:ANSWER_SNIPPET]]
        retrieval = p.get("retrieval") or {}
        links = index.get(str(p.get("corpus_id")), {})
        detail = {
            "answer": answer, "answered_by": p.get("answered_by"), "score": score, "label": label,
            "diag": {k: _finite(d.get(k)) for k in ("gold_recall", "all_gold_present", "gold_token_share")},
            "context": {"blocks": context_blocks(p.get("context_text") or "", sorted({*units, *gold_units}),
                                                 gold_units, store),
                        "tokens": p.get("context_tokens"), "units": units, "unit_tokens": p.get("context_unit_tokens"),
                        "cap": cap, "cap_audit": p.get("cap_audit"),
                        "dropped": retrieval.get("dropped_units") or [], "truncated": bool(retrieval.get("truncated"))},
            "judge": judge_view(j), "usage": p.get("usage") or {}, "retrieval": _retrieval_text(retrieval),
            "flags": flags, "health": names,
            "index": {"units": {u: links["units"][u] for u in sorted({*units, *gold_units}) if u in links.get("units", {})},
                      "files": links.get("files", {})} if links else {},
        }
        out[qid] = (cell, detail)
    return out


def question_record(qid: str, preds: list[dict[str, Any] | None], attrs: list[str]) -> dict[str, Any]:
    """What a question is, from the first run that has it (every run saves the same question)."""
    p = next(x for x in preds if x is not None)
    return {"id": qid, "question": p.get("question", ""), "gold": p.get("gold"),
            "gold_units": [str(u) for u in p.get("gold_units") or []], "corpus_id": p.get("corpus_id"),
            "attrs": [p.get(a) for a in attrs],
            "extra": {k: p[k] for k in ("evidence", "adversarial_answer", "cue_completed") if p.get(k) is not None}}


def gold_text(gold: Any) -> str:
    if isinstance(gold, list):
        return "; ".join(map(str, gold))
    return "" if gold is None else str(gold)
