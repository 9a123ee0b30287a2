"""Index-time entity summaries, one per (chapter, entity), from the workspace in chunk order.

The prompt lists the entity's stamped roles and states, the actions it answers a valence
question of, and its space/time history; the summary is what QA later puts in context.
Entities below `min_mentions` chunk mentions get no LLM call: QA shows their fact list instead.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .prompts import summary_messages
from .workspace import Workspace, entity_facts, verbs_by_entity


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
                    vbe: dict[str, list[str]] | None = None,
                    by_chapter: dict[str, dict[str, int]] | None = None) -> dict[str, int]:
    """Fill `entity.summaries[chapter]` for each eligible entity; returns counts.

    `vbe` and `by_chapter` may be passed in precomputed when one workspace spans many chapters.
    """
    vbe = vbe if vbe is not None else verbs_by_entity(ws)
    present = (by_chapter if by_chapter is not None else entities_by_chapter(ws)).get(chapter, {})
    todo = [e for e, n in present.items() if n >= min_mentions and chapter not in ws.entities[e].summaries]

    async def one(eid: str) -> None:
        facts = entity_facts(ws, eid, chapter, space_time=space_time, vbe=vbe)
        r = await llm.complete(summary_messages(title, ws.entities[eid].name, facts), max_tokens=max_tokens)
        ws.entities[eid].summaries[chapter] = r.text.strip()

    await asyncio.gather(*(one(e) for e in todo))
    return {"summaries_llm": len(todo), "summaries_facts_only": sum(1 for n in present.values() if n < min_mentions)}
