"""Context checks: what the answering model was given, from predictions.jsonl and metrics.json.

- empty: an empty context, or one that is only the method's package's no-context marker (the
  exact strings each method declares, `MemoryMethod.no_context_markers`; never a length rule);
- distinct: distinct contexts per question (per corpus); a retriever that serves the same few
  contexts to every question ignores the question. Not judged when every context is the whole
  corpus (Vanilla), where one context for all questions is the design;
- gold_recall: the gold units the context holds (metrics.json, computed by the score stage);
- gold_strings: the share of gold answer strings (normalised; dates by calendar day) found in
  the context, judged where the protocol's gold strings are spans of the text (EpBench's names,
  places, dates): what the answering model could read, whatever units the method names. Until
  health format 3 it was that share divided by gold-unit recall, which a method naming few units
  passed with almost no gold in its contexts (EpBench GraphRAG: "ok 1.82" at 10%);
- beyond_cap: contexts that quote units the method did not report, so the shared cap did not
  bound them (the harness's cap audit, recorded per prediction);
- hub_unit: one unit in nearly every context of a corpus (spread.py);
- unit_dates: contexts that name dated units (sessions) and show none of their dates (dates.py);
- truncated: contexts cut to fit the answering model's window (a whole-corpus method records
  `truncated` and the units it dropped): such a question was answered without part of what the
  method is defined to hand over, so "everything in context" no longer holds;
- fallback: contexts the method's own memory did not produce, where its package fell back to
  another retriever (a method that can fall back records `fallback` in each prediction's
  retrieval: HippoRAG 2's dense passage retrieval when its recognition memory keeps no fact);
- unsourced_names: contexts holding a name the corpus never writes, a memory's invention or a
  package prompt's example copied into the index (names.py).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..answer_text import find_dates, normalize, parse_date
from ..runs.cap_audit import summarize as summarize_audit
from ..runs.health_file import NOT_MEASURED, Check
from .dates import unit_dates_check
from .grading import check, not_measured, pct, share
from .names import unsourced_names_check
from .spread import hub_unit_check

SCOPE = "context"


def is_empty(context: str, markers: tuple[str, ...]) -> bool:
    """True for an empty context and for one made only of no-context markers."""
    for m in markers:
        context = context.replace(m, "")
    return not context.strip()


def _whole_corpus(predictions: list[dict[str, Any]], corpus_units: dict[str, int]) -> bool:
    """Every context holds every unit of its corpus (the design of Vanilla)."""
    return bool(predictions) and all(
        corpus_units.get(str(p.get("corpus_id"))) and
        len(set(p.get("context_chapters") or [])) >= corpus_units[str(p.get("corpus_id"))] for p in predictions)


class _Text:
    """A context normalised once for gold-string look-ups."""

    def __init__(self, text: str):
        self.words = f" {normalize(text)} "
        self.dates = {d.key for d in find_dates(text)}

    def has(self, gold: str) -> bool:
        date = parse_date(gold)
        if date is not None:
            return date.key in self.dates
        key = normalize(gold)
        return bool(key) and f" {key} " in self.words


def gold_string_share(predictions: list[dict[str, Any]], markers: tuple[str, ...]) -> tuple[int, int]:
    """(gold strings found in their question's context, gold strings) over questions with gold units."""
    found = total = 0
    texts: dict[str, _Text] = {}  # contexts repeat (Vanilla's is one for all): read each once
    for p in predictions:
        gold = [str(g) for g in (p.get("gold") or []) if str(g).strip()]
        if not gold or not p.get("gold_units"):
            continue
        ctx = str(p.get("context_text") or "")
        for m in markers:
            ctx = ctx.replace(m, "")
        text = texts.get(ctx) or texts.setdefault(ctx, _Text(ctx))
        found += sum(text.has(g) for g in gold)
        total += len(gold)
    return found, total


def unpublished(p: dict[str, Any]) -> bool:
    """An imported answer whose source published no context (methods/imported.py): nothing to check."""
    return (p.get("retrieval") or {}).get("context_published") is False


def context_checks(predictions: list[dict[str, Any]], metrics: dict[str, Any], markers: tuple[str, ...],
                   gold_in_text: bool, corpus_units: dict[str, int], th: dict[str, Any],
                   unit_dates: dict[str, dict[str, str]] | None = None,
                   sources: dict[str, frozenset[str]] | None = None, labels: tuple[str, ...] = ()) -> list[Check]:
    """The context checks over the contexts the run holds; imported answers without a published
    context are left out, and a run with none at all has every context check "not measured"."""
    seen = [p for p in predictions if not unpublished(p)]
    if predictions and not seen:
        why = (f"the {len(predictions)} answers were imported without the contexts they were written from: "
               "there is no context to check")
        return [Check(c.name, c.scope, NOT_MEASURED, None, c.threshold, why)
                for c in _context_checks(predictions, metrics, markers, gold_in_text, corpus_units, th,
                                         unit_dates, sources, labels)]
    return _context_checks(seen, metrics, markers, gold_in_text, corpus_units, th, unit_dates, sources, labels)


def _context_checks(predictions: list[dict[str, Any]], metrics: dict[str, Any], markers: tuple[str, ...],
                    gold_in_text: bool, corpus_units: dict[str, int], th: dict[str, Any],
                    unit_dates: dict[str, dict[str, str]] | None = None,
                    sources: dict[str, frozenset[str]] | None = None, labels: tuple[str, ...] = ()) -> list[Check]:
    n = len(predictions)
    contexts = [str(p.get("context_text") or "") for p in predictions]
    empty = sum(is_empty(c, markers) for c in contexts)
    marked = sum(1 for c in contexts if c.strip() and is_empty(c, markers))
    out = [check("empty_contexts", SCOPE, share(empty, n), th["empty"],
                 f"{pct(empty, n)} contexts empty" + (f" ({marked} only the package's no-context marker)"
                                                      if marked else ""))]
    distinct = len({(p.get("corpus_id"), c.strip()) for p, c in zip(predictions, contexts, strict=True)})
    if _whole_corpus(predictions, corpus_units):
        # Vanilla's design; a capped method (its contexts carry the cap audit) got there because the
        # cap holds every corpus (LongMemEval's oracle): its retrieval chose nothing
        why = ("the cap holds every corpus, so retrieval was not tested"
               if any("cap_audit" in p for p in predictions) else "by design")
        out.append(not_measured("distinct_contexts", SCOPE, th["distinct"],
                                f"{distinct} distinct contexts: every context is the whole corpus ({why})"))
    else:
        out.append(check("distinct_contexts", SCOPE, share(distinct, n), th["distinct"],
                         f"{distinct} distinct contexts for {n} questions", low_is_bad=True))
    out.append(hub_unit_check(predictions, corpus_units, th["hub_unit"]))
    overall = (metrics.get("retrieval") or {}).get("overall") or {}
    recall = overall.get("gold_recall")
    if recall is None:
        out.append(not_measured("gold_unit_recall", SCOPE, th["gold_recall"], "no question with gold units"))
    else:
        out.append(check("gold_unit_recall", SCOPE, round(float(recall), 4), th["gold_recall"],
                         f"gold-unit recall {recall:.2f} over {overall.get('n_with_gold')} questions with gold units",
                         low_is_bad=True))
    out.append(gold_strings_check(predictions, markers, gold_in_text, recall, th["gold_string_share"]))
    out.append(unit_dates_check(predictions, unit_dates, th["unit_dates"]))
    out.append(beyond_cap_check(predictions, th["beyond_cap"]))
    out.append(truncated_check(predictions, th["truncated"]))
    out.append(fallback_check(predictions, th["fallback"]))
    out.append(unsourced_names_check(predictions, sources, labels, markers, th["unsourced_names"]))
    return out


def gold_strings_check(predictions: list[dict[str, Any]], markers: tuple[str, ...], gold_in_text: bool,
                       recall: float | None, limits: dict[str, Any]) -> Check:
    """The share of gold answer strings in their questions' contexts, graded (low is bad) where
    the protocol's gold strings are spans of the text; a figure only elsewhere (free-text gold)."""
    found, total = gold_string_share(predictions, markers)
    strings = share(found, total)
    what = f"{pct(found, total)} gold answer strings in the context"
    if strings is None:
        return not_measured("gold_strings", SCOPE, limits, "no gold answer strings")
    if not gold_in_text:
        return not_measured("gold_strings", SCOPE, limits,
                            f"{what}: figure only, the protocol's gold answers are not spans of the text")
    if recall is not None:
        what += f" (gold-unit recall {float(recall):.2f})"
    return check("gold_strings", SCOPE, strings, limits, what, low_is_bad=True)


def fallback_check(predictions: list[dict[str, Any]], limits: dict[str, Any]) -> Check:
    """Share of contexts that came from the package's fallback (a reason in retrieval.fallback)
    among the predictions that record whether it fell back."""
    recorded = [p["retrieval"]["fallback"] for p in predictions
                if isinstance(p.get("retrieval"), dict) and "fallback" in p["retrieval"]]
    if not recorded:
        return not_measured("fallback", SCOPE, limits, "no prediction records whether the method fell back")
    fell = Counter(str(r) for r in recorded if r)
    n = sum(fell.values())
    what = f"{pct(n, len(recorded))} contexts came from a fallback, not the method's own memory"
    if fell:
        reasons = [f"{k}: {reason}" for reason, k in fell.most_common(3)]
        if len(fell) > 3:
            reasons.append(f"{len(fell) - 3} more reasons")
        what += f" ({'; '.join(reasons)})"
    return check("fallback", SCOPE, share(n, len(recorded)), limits, what)


def beyond_cap_check(predictions: list[dict[str, Any]], limits: dict[str, Any]) -> Check:
    """Contexts whose text quotes units the method did not report (harness/provenance.py's cap
    audit): the cap bounds the reported units, so such text passes it unseen. A graph package's
    node or fact that copies a sentence of another chapter is the usual way."""
    summary = summarize_audit(predictions)
    if summary is None:
        return not_measured("beyond_cap", SCOPE, limits, "no prediction carries a cap audit")
    n, flagged = summary["n"], summary["contexts_with_units_beyond_reported"]
    what = f"{pct(flagged, n)} contexts quote units beyond the ones the method reported (the cap)"
    if flagged:
        worst = max((p for p in predictions if isinstance(p.get("cap_audit"), dict)),
                    key=lambda p: len(p["cap_audit"].get("verbatim_beyond_units") or []))
        units = worst["cap_audit"]["verbatim_beyond_units"]
        what += f"; e.g. {worst.get('question_id')}: {len(units)} more ({', '.join(map(str, units[:6]))})"
    return check("beyond_cap", SCOPE, share(flagged, n), limits, what)


def truncated_check(predictions: list[dict[str, Any]], limits: dict[str, Any]) -> Check:
    """Share of contexts the method cut to fit the answering model's window (retrieval.truncated,
    with the units it dropped), named with the question that lost most."""
    n = len(predictions)
    cut = [p for p in predictions if isinstance(p.get("retrieval"), dict) and p["retrieval"].get("truncated")]
    what = f"{pct(len(cut), n)} contexts cut to fit the answering model's window"
    if cut:
        worst = max(cut, key=lambda p: len(p["retrieval"].get("dropped_units") or []))
        dropped = [str(u) for u in worst["retrieval"].get("dropped_units") or []]
        kept = len(worst.get("context_chapters") or [])
        what += (f"; e.g. {worst.get('question_id')}: {len(dropped)} of {len(dropped) + kept} units dropped"
                 f" ({', '.join(dropped[:4])}{', ...' if len(dropped) > 4 else ''})")
    return check("truncated", SCOPE, share(len(cut), n), limits, what)
