"""QA over GSW: question entities, matching to workspace entities, ranking, context assembly.

Matching modes (Table 13 of the paper): `string` (NER, then normalised string matching of names
and aliases, the paper's method), `ner_embedding` (NER, then each question entity's nearest
entity names by embedding), `embedding` (no NER: the question embedding against every entry).
`rerank` orders matched entries by question/entry embedding similarity; without it they keep
story order. Entries come from at most `cap` chapters, and at most `max_entries` of them (the
top-k cut after reranking: the paper keeps the top summaries). String matching is generous on
purpose (equal, contained either way, or sharing a name word), so that reranking and the cut,
not the matcher, decide what the answering model reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .summaries import entities_by_chapter
from .workspace import FactIndex, Workspace, normalise_name, verb_line, verbs_by_entity

_STOP = {"the", "a", "an", "of", "and", "in", "on", "at", "to", "for", "event", "events", "mr", "mrs", "ms",
         "dr", "st", "de", "la", "le", "van", "von", "day", "night", "time", "year", "years"}
# words that do not identify a name on their own: a shared month or weekday is not a shared name
_NOT_NAMES = {"january", "february", "march", "april", "may", "june", "july", "august", "september",
              "october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday",
              "saturday", "sunday"}


@dataclass
class Entry:
    """One (chapter, entity) unit of QA context."""

    chapter: str
    chapter_pos: int
    entity_id: str
    name: str
    names: list[str]
    summary: str
    summary_source: str  # llm | facts | summary_failed
    verbs_text: str
    mentions: int


def entries_from(ws: Workspace, positions: dict[str, int], space_time: bool = True) -> list[Entry]:
    """QA entries of every chapter of a workspace (the workspace itself can then be dropped)."""
    vbe = verbs_by_entity(ws)
    index = FactIndex(ws, space_time, vbe)
    failed = ws.meta.get("summary_failures") or {}
    out = []
    by_chapter = entities_by_chapter(ws)
    for ch in ws.chapters:
        for eid, mentions in by_chapter.get(ch, {}).items():
            e = ws.entities[eid]
            facts = index.facts(eid, ch)
            summary, source = ((e.summaries[ch], "llm") if ch in e.summaries else
                               ("; ".join(facts), "summary_failed" if f"{ch}/{eid}" in failed else "facts"))
            verbs = [verb_line(ws, ws.verbs[v]) for v in vbe.get(eid, []) if ws.verbs[v].chunk.rsplit(".", 1)[0] == ch]
            out.append(Entry(ch, positions.get(ch, 0), eid, e.name, [e.name, *e.aliases], summary, source,
                             "; ".join(verbs), mentions))
    return out


@dataclass
class NameMatcher:
    """String matching of question entities to entry names through exact and token indexes."""

    exact: dict[str, set[int]] = field(default_factory=dict)
    postings: dict[str, set[int]] = field(default_factory=dict)
    tokens: dict[int, list[tuple[str, ...]]] = field(default_factory=dict)

    def add(self, i: int, names: list[str]) -> None:
        for n in names:
            key = normalise_name(n)
            if not key:
                continue
            self.exact.setdefault(key, set()).add(i)
            toks = tuple(key.split())
            self.tokens.setdefault(i, []).append(toks)
            for t in set(toks) - _STOP:
                self.postings.setdefault(t, set()).add(i)

    def match(self, query: str) -> set[int]:
        """Entries whose name equals the query, contains it or is contained in it (as word
        sequences), or shares a name word with it (not a stop word, number, month or weekday)."""
        key = normalise_name(query)
        if not key:
            return set()
        hits = set(self.exact.get(key, ()))
        q = tuple(key.split())
        content = [t for t in q if t not in _STOP]
        cands: set[int] = set()
        for t in content:
            if _is_name_word(t):
                hits |= self.postings.get(t, set())
            cands |= self.postings.get(t, set())
        for i in cands - hits:
            for toks in self.tokens.get(i, []):
                if _contains(toks, q) or (any(t not in _STOP for t in toks) and _contains(q, toks)):
                    hits.add(i)
                    break
        return hits


def _is_name_word(t: str) -> bool:
    return len(t) >= 3 and not t.isdigit() and t not in _NOT_NAMES


def _contains(hay: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    n = len(needle)
    return 0 < n <= len(hay) and any(hay[i:i + n] == needle for i in range(len(hay) - n + 1))


def select(order: list[int], entries: list[Entry], cap: int | None, max_entries: int | None) -> list[int]:
    """Take entries in order while their chapters stay within the cap."""
    chosen, chapters = [], set()
    for i in order:
        ch = entries[i].chapter
        if cap is not None and ch not in chapters and len(chapters) >= cap:
            continue
        chapters.add(ch)
        chosen.append(i)
        if max_entries is not None and len(chosen) >= max_entries:
            break
    return chosen


def rank(cands: list[int], entries: list[Entry], sims: np.ndarray | None) -> list[int]:
    """By similarity when given (rerank), else story order (chapter, then first mention)."""
    if sims is not None:
        return sorted(cands, key=lambda i: (-float(sims[i]), i))
    return sorted(cands, key=lambda i: (entries[i].chapter_pos, i))


def format_context(entries: list[Entry], chosen: list[int], titles: dict[str, str], qa_input: str) -> str:
    blocks = []
    for i in chosen:
        e = entries[i]
        body = e.verbs_text if qa_input == "verb_phrases" else e.summary
        blocks.append(f"### {titles.get(e.chapter, e.chapter)}: {e.name}\n{body or '(nothing recorded)'}")
    return "\n\n".join(blocks)
