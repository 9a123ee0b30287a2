"""EpBench Chronological Awareness: the order judge call and the Latest / Order / CA statistics.

As ../shared/docs/PROTOCOLS.md states it: Latest is the count-weighted mean F1 of get == latest
questions in buckets 2, 3-5 and 6+. Order needs a second judge call on every get ==
chronological question with at least 2 ground-truth items: each predicted item, in the order
the answer gives it, is mapped to the first unused ground-truth index (or -1). The -1s and
repeated indices are dropped; Kendall's tau (scipy) compares the answer's positions with the
ground-truth positions; Order = max(0, share of those questions whose whole ground-truth set
was matched x mean tau over them). CA = mean(Latest, Order).

The judge's raw reply is stored in the judgments line, so `memeval.evaluation.rescore` recomputes all
of it without a model call.

Order judge versions (`protocol.order_judge_version`): version 1 showed the judge the question and
the answer beside the items, and asked it to put the items in the answer's order, so the judge
reordered by its own reading of the answer. Version 2 follows the official design: the judge sees
only the reference list and the first judge's items, in the order that judge listed them (the
order the answer states them), and maps each to a reference index; the items' order is never
the order judge's to decide. Runs configured before version 2 keep version 1 (the upgrade module).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, create_model
from scipy.stats import kendalltau

from memeval.model_access.chat import ChatModel
from memeval.model_access.errors import JsonOutputError

from .behaviour import OrderJudge

ORDER_PROMPT_VERSION = "epbench-order-v1"
ORDER_PROMPTS = {1: ORDER_PROMPT_VERSION, 2: "epbench-order-v2"}
ORDER_JUDGE_VERSIONS = tuple(ORDER_PROMPTS)
LATEST_BUCKETS = ("2", "3-5", "6+")
MIN_GOLD = 2

_SYSTEM = (
    "You check the order of a list answer. You are given the reference list (numbered from 0, in "
    "the correct order), the answer, and the items already found in the answer. Return JSON with "
    "two fields.\n"
    "mapping: one entry per found item, in the order the answer states them (not the order they "
    "are listed to you). Each entry has item (the found item, copied) and reference_index: the "
    "number of the first reference item it names (synonyms and other date formats count) that no "
    "earlier entry already used, or -1 if it names none.\n"
    "explanation: one sentence."
)


_SYSTEM_V2 = (
    "You match items to a numbered reference list. You are given the reference list (numbered from "
    "0) and a list of items. Return JSON with two fields.\n"
    "mapping: one entry per item, in the order the items are given to you. Each entry has item (the "
    "item, copied) and reference_index: the number of the first reference entry the item names "
    "(synonyms and other date formats count) that no earlier entry already used, or -1 if it names "
    "none.\n"
    "explanation: one sentence."
)


class _Entry(BaseModel):
    item: str = Field(max_length=300)
    reference_index: int


def order_model(n_pred: int) -> type[BaseModel]:
    """A schema with exactly one mapping entry per predicted item."""
    return create_model(f"EpBenchOrder{n_pred}", mapping=(list[_Entry], Field(min_length=n_pred,
                                                                             max_length=n_pred)),
                        explanation=(str, Field(max_length=400)))


def order_messages(question: str, gold: list[str], answer: str, predicted: list[str]) -> list[dict[str, str]]:
    numbered = "\n".join(f"{i}: {g}" for i, g in enumerate(gold))
    user = (f"Question:\n{question}\n\nReference list (correct order):\n{numbered}\n\n"
            f"Answer:\n{answer}\n\nFound items:\n{json.dumps(predicted, ensure_ascii=False)}\n\n"
            f"Return the JSON object; mapping must have exactly {len(predicted)} entries.")
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


def order_messages_v2(gold: list[str], predicted: list[str]) -> list[dict[str, str]]:
    """Version 2: the reference list and the first judge's items only (no question, no answer)."""
    numbered = "\n".join(f"{i}: {g}" for i, g in enumerate(gold))
    items = "\n".join(f"- {' '.join(p.split())}" for p in predicted)  # one line per item
    user = (f"Reference list:\n{numbered}\n\nItems, in this order:\n{items}\n\n"
            f"Return the JSON object; mapping must have exactly {len(predicted)} entries.")
    return [{"role": "system", "content": _SYSTEM_V2}, {"role": "user", "content": user}]


def needs_order_call(get: str | None, n_gold: int) -> bool:
    return get == "chronological" and n_gold >= MIN_GOLD


async def judge_order(judge: ChatModel, question: str, gold: list[str], answer: str,
                      predicted: list[str], rules: OrderJudge | int = 1) -> dict[str, Any]:
    """The order judge's reply as judgments fields (or a recorded failure, never a silent score).

    Nothing predicted needs no call: the mapping is empty. Order judge `rules` (behaviour.py; an
    unknown version raises UnknownVersion naming the known ones): from version 2 the judge reads
    neither `question` nor `answer` (module docstring).
    """
    rules = OrderJudge.of(rules)
    out: dict[str, Any] = {"order_prompt": ORDER_PROMPTS[rules.version]}
    if not predicted:
        return {**out, "order_mapping": [], "order_explanation": "nothing claimed"}
    messages = (order_messages(question, gold, answer, predicted) if rules.order_judge_sees_answer
                else order_messages_v2(gold, predicted))
    try:
        parsed, result = await judge.complete_json(messages, order_model(len(predicted)), max_tokens=600)
    except JsonOutputError as exc:
        return {**out, "order_error": str(exc), "order_raw": exc.raw_outputs}
    data = parsed.model_dump()
    return {**out, "order_mapping": [int(e["reference_index"]) for e in data["mapping"]],
            "order_items": [str(e["item"]) for e in data["mapping"]],
            "order_explanation": data["explanation"], "order_cached": result.cached}


@dataclass(frozen=True)
class OrderResult:
    positions: list[int]  # ground-truth indices in the answer's order, -1s and repeats dropped
    complete: bool  # every ground-truth item matched
    tau: float  # Kendall's tau of answer order vs ground-truth order (NaN when undefined)


def order_of(mapping: Sequence[int], n_gold: int) -> OrderResult:
    """Positions, completeness and tau for one question from the judge's index list."""
    positions: list[int] = []
    for idx in mapping:
        if 0 <= idx < n_gold and idx not in positions:
            positions.append(idx)
    complete = len(positions) == n_gold
    tau = math.nan
    if len(positions) >= 2:
        tau = float(kendalltau(list(range(len(positions))), positions).statistic)
    return OrderResult(positions, complete, tau)


def order_score(results: Sequence[OrderResult]) -> float:
    """max(0, share of questions fully matched x mean tau over those); NaN with no question."""
    if not results:
        return math.nan
    full = [r.tau for r in results if r.complete and not math.isnan(r.tau)]
    if not full:
        return 0.0
    return max(0.0, (len(full) / len(results)) * (sum(full) / len(full)))


Part = tuple[float | None, OrderResult | None]  # (Latest F1, Order result) of one judgments line


def credited_mapping(mapping: Sequence[int], scores: Sequence[float]) -> list[int]:
    """The order judge's mapping with every index whose gold item has no credit set to -1: the
    order judge places the items the answer names, credited or not, so an answer listing the
    gold items it got wrong in the gold order would otherwise be in perfect order."""
    return [i if 0 <= i < len(scores) and scores[i] > 0 else -1 for i in mapping]


def ca_parts(rows: Sequence[dict[str, Any]], f1_of: Callable[[dict[str, Any]], float],
             scores_of: Callable[[dict[str, Any]], Sequence[float]] | None = None) -> list[Part]:
    """What each line contributes (computed once; bootstrap resamples reuse it). `scores_of`
    (a line's credit per gold item): Order counts only credited items (credited_mapping)."""
    parts: list[Part] = []
    for r in rows:
        latest = f1_of(r) if r.get("get") == "latest" and r.get("bucket") in LATEST_BUCKETS else None
        order = None
        if needs_order_call(r.get("get"), len(r["gold"])) and "order_mapping" in r:
            mapping = r["order_mapping"] if scores_of is None else credited_mapping(r["order_mapping"], scores_of(r))
            order = order_of(mapping, len(r["gold"]))
        parts.append((latest, order))
    return parts


def chronological_awareness(parts: Sequence[Part], idx: Sequence[int] | None = None) -> dict[str, Any]:
    """Latest, Order and CA over the lines' parts (`idx` selects a bootstrap resample)."""
    picked = [parts[i] for i in idx] if idx is not None else list(parts)
    latest = [f for f, _ in picked if f is not None]
    ordered = [o for _, o in picked if o is not None]
    lat = sum(latest) / len(latest) if latest else math.nan
    order = order_score(ordered)
    ca = (lat + order) / 2 if not (math.isnan(lat) or math.isnan(order)) else math.nan
    return {"latest": lat, "order": order, "ca": ca, "n_latest": len(latest), "n_order": len(ordered),
            "n_order_complete": sum(1 for r in ordered if r.complete)}
