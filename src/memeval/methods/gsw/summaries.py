"""Index-time entity summaries, one per (chapter, entity), from the workspace in chunk order.

The prompt lists the entity's stamped roles and states, the actions it answers a valence
question of, and its space/time history; the summary is what QA later puts in context.
Entities below `min_mentions` chunk mentions get no LLM call: QA shows their fact list instead.
A summary call that fails after the client's retries fails that entry only: it is recorded in
`ws.meta["summary_failures"]` (QA shows the entry's fact list, marked `summary_failed`), and
the next index run over the saved workspace tries it again.
"""

from __future__ import annotations

import asyncio
from typing import Any

from memeval.model_access.errors import ModelCallError

from .prompts import summary_messages
from .workspace import FactIndex, Workspace


def entities_by_chapter(ws: Workspace) -> dict[str, dict[str, int]]:
    """chapter -> {entity id: chunk mentions}, entities in order of first mention (one pass)."""
    out: dict[str, dict[str, int]] = {ch: {} for ch in ws.chapters}
    for e in ws.entities.values():
        for c in e.chunks:
            per = out.setdefault(c.rsplit(".", 1)[0], {})
            per[e.id] = per.get(e.id, 0) + 1
    return out


async def summarise(llm: Any, ws: Workspace, chapter: str, title: str, *, min_mentions: int = 1,
                    space_time: bool = True, max_tokens: int = 500,
                    facts: FactIndex | None = None,
                    by_chapter: dict[str, dict[str, int]] | None = None,
                    stop_repeats: bool = True, version: int = 2) -> dict[str, int]:
    """Fill `entity.summaries[chapter]` for each eligible entity; returns counts.

    `facts` and `by_chapter` may be passed in precomputed when one workspace spans many chapters.
    `stop_repeats`: a summary ends before its first repeated run of 12 words (repeat_stop).
    `version`: the summary prompt (prompts.SUMMARY, SUMMARY_V2).
    """
    stop = {"stop_repeats": "text_ngrams"} if stop_repeats else {}
    index = facts if facts is not None else FactIndex(ws, space_time)
    present = (by_chapter if by_chapter is not None else entities_by_chapter(ws)).get(chapter, {})
    todo = [e for e, n in present.items() if n >= min_mentions and chapter not in ws.entities[e].summaries]
    failures: dict[str, str] = ws.meta.setdefault("summary_failures", {})

    async def one(eid: str) -> bool:
        messages = summary_messages(title, ws.entities[eid].name, index.facts(eid, chapter), version)
        try:
            r = await llm.complete(messages, max_tokens=max_tokens, **stop)
        except ModelCallError as exc:
            failures[f"{chapter}/{eid}"] = str(exc)[:300]
            return False
        ws.entities[eid].summaries[chapter] = r.text.strip()
        failures.pop(f"{chapter}/{eid}", None)
        return True

    ok = await asyncio.gather(*(one(e) for e in todo))  # the caller drops an empty failure record
    return {"summaries_llm": sum(ok), "summaries_failed": len(ok) - sum(ok),
            "summaries_facts_only": sum(1 for n in present.values() if n < min_mentions)}
