"""The per-chapter LLM stages before reconciliation: coreference rewrite, chunking, optional
situating context, the Operator, and space-time coupling. Each is its own cached call, so a
rerun or a resumed index replays them for free. A chunk whose Operator reply stays invalid after
the bounded repair loop is kept, marked failed, and counted; the chapter goes on. The Operator
and space-time replies travel in the configured wire format (`wire`): `compact` (wire.py's line
layout, grammar-constrained on llama.cpp) or `json` (the json_schema replies of older runs).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from memeval.datasets.types import Unit
from memeval.model_access.errors import JsonOutputError
from memeval.model_access.repeat_stop import RULES

from .frame import conversation_chunks, dated, framed_lines, parse_turns
from .guard import guard_operator
from .prompts import WIRES, coref_messages, operator_messages, situate_messages, spacetime_messages
from .schemas import OperatorOutput, SpaceTimeOutput
from .wire import OPERATOR_FORMAT, SPACETIME_FORMAT
from .workspace import ChunkRecord

M = TypeVar("M", bound=BaseModel)
SPACETIME_COMPACT_STOP = RULES["line_blocks"]  # joins a compact index's identity (GSWMethod.params)

_SEGMENTER: Any = None


def split_sentences(text: str) -> list[str]:
    """Sentences by pysbd's rule-based boundary detection (it knows abbreviations such as
    "St.", "Dr.", "Mr." and initials); paragraphs always split."""
    global _SEGMENTER
    if _SEGMENTER is None:
        import pysbd

        _SEGMENTER = pysbd.Segmenter(language="en", clean=False)
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if para:
            out += [s.strip() for s in _SEGMENTER.segment(para)]
    return [s for s in out if s]


def make_chunks(text: str, size: int = 3, overlap: int = 0, min_words: int | None = None) -> list[str]:
    """Groups of `size` sentences; consecutive groups share `overlap` sentences (0 = none).
    `min_words`: a group keeps taking sentences until it holds at least this many words, so
    short chat turns give the Operator as much text per call as prose sentences do."""
    if size < 1 or not 0 <= overlap < size:
        raise ValueError("chunk_sentences must be >= 1 and 0 <= chunk_overlap < chunk_sentences")
    if min_words is not None and min_words < 1:
        raise ValueError(f"chunk_min_words must be >= 1 or null, not {min_words}")
    sents = split_sentences(text)
    chunks: list[str] = []
    i = 0
    while i < len(sents):
        end = min(i + size, len(sents))
        while min_words and end < len(sents) and len(" ".join(sents[i:end]).split()) < min_words:
            end += 1
        chunks.append(" ".join(sents[i:end]))
        if end >= len(sents):
            break
        i = max(end - overlap, i + 1)
    return chunks


@dataclass
class StageSettings:
    chunk_sentences: int = 3
    chunk_overlap: int = 0
    chunk_min_words: int | None = None
    coreference: bool = True
    situating_context: bool = True
    space_time: bool = True
    coref_max_tokens: int = 2048
    coref_min_ratio: float = 0.6  # a rewrite shorter than this share of the original is refused
    coref_max_ratio: float = 1.6  # ... and one longer than this (a looping model) too
    situate_max_tokens: int = 120
    operator_max_tokens: int = 1500
    spacetime_max_tokens: int = 1000
    stop_repeats: bool = True  # end a looping reply at its first repeat (model_access.repeat_stop)
    speaker_frame: bool = True  # conversations: chunks of whole turns, speaker on every line (frame.py)
    unit_dates: bool = True  # a unit's timestamp heads each chunk, the situating text and its title
    wire: str = "compact"  # Operator/space-time reply format: compact (wire.py) | json (older runs)


class OperatorStages:
    """Runs the extraction stages of one chapter against one chat model."""

    def __init__(self, llm: Any, settings: StageSettings):
        if settings.wire not in WIRES:
            raise ValueError(f"gsw wire must be one of {list(WIRES)}, not {settings.wire!r}")
        self.llm = llm
        self.s = settings

    def _stop(self, rule: str) -> dict[str, Any]:
        """The repeat-stop argument when it is on; nothing otherwise (earlier cache keys hold).
        Not used for coreference (a rewritten chapter may repeat the chapter's own phrases) nor
        for JSON space-time replies (replayed on the saved 20-chapter run, the item cut dropped 9
        distinct links). Compact space-time replies are cut at their first repeated line
        (`SPACETIME_COMPACT_STOP`): the 0.5B model repeated lines in 140 of 142 of them on the
        book (834 of 1,420 links exact repeats); replayed, the cut saves 8.5k of their 14.7k
        generated tokens and drops 10 distinct values, nearly all of them not places or times."""
        return {"stop_repeats": rule} if self.s.stop_repeats else {}

    async def _structured(self, messages: list[dict[str, str]], model: type[M], max_tokens: int,
                          stop: bool) -> M:
        """One structured reply in the configured wire format (the repeat-stop rule that fits
        it when `stop`): compact lines through the format's decoder, or JSON."""
        if self.s.wire == "compact":
            fmt = OPERATOR_FORMAT if model is OperatorOutput else SPACETIME_FORMAT
            out, _ = await self.llm.complete_format(messages, fmt, max_tokens=max_tokens,
                                                    **(self._stop("line_blocks") if stop else {}))
        else:
            out, _ = await self.llm.complete_json(messages, model, max_tokens=max_tokens,
                                                  **(self._stop("json_items") if stop else {}))
        return out

    async def coref(self, text: str) -> tuple[str, str]:
        """(text to chunk, status): the rewrite, or the original when the rewrite looks truncated."""
        if not self.s.coreference:
            return text, "off"
        r = await self.llm.complete(coref_messages(text), max_tokens=self.s.coref_max_tokens)
        out = r.text.strip()
        n = len(text.strip())
        if not self.s.coref_min_ratio * n <= len(out) <= self.s.coref_max_ratio * n:
            return text, "fallback_original"
        return out, "ok"

    async def situate(self, chapter: str, chunk: str) -> str:
        if not self.s.situating_context:
            return ""
        r = await self.llm.complete(situate_messages(chapter, chunk), max_tokens=self.s.situate_max_tokens,
                                    **self._stop("text_ngrams"))
        return r.text.strip()

    async def chunk(self, rec: ChunkRecord, chapter_text: str) -> tuple[OperatorOutput | None, SpaceTimeOutput | None]:
        """Situate, Operator, space-time for one chunk; failures are written into the record."""
        rec.context = await self.situate(chapter_text, rec.text)
        try:
            op = await self._structured(operator_messages(rec.text, rec.context, self.s.wire), OperatorOutput,
                                        self.s.operator_max_tokens, stop=True)
        except JsonOutputError as exc:
            rec.status, rec.error = "operator_failed", str(exc)[:500]
            return None, None
        rec.operator = op.model_dump(mode="json")
        kept, _ = guard_operator(op, rec.text)  # the entities the Reconciler will keep (counted there)
        if not self.s.space_time or not kept.entities:
            return op, None
        try:
            st = await self._structured(
                spacetime_messages(rec.text, [(e.id, e.name) for e in kept.entities], self.s.wire), SpaceTimeOutput,
                self.s.spacetime_max_tokens, stop=self.s.wire == "compact")
        except JsonOutputError as exc:
            rec.status, rec.error = "spacetime_failed", str(exc)[:500]
            return op, None
        rec.space_time = st.model_dump(mode="json")
        return op, st

    def chunk_texts(self, unit: Unit, text: str, status: str) -> tuple[list[str], str, str]:
        """(chunks, the text the situating call reads, coref status). A conversation under
        `speaker_frame` is chunked at turn boundaries from its coreference rewrite when that kept
        every turn and speaker, else from the original turns (status `fallback_turns`)."""
        s = self.s
        turns = parse_turns(unit.text) if s.speaker_frame else None
        if turns is None:
            chunks = make_chunks(text, s.chunk_sentences, s.chunk_overlap, s.chunk_min_words)
        else:
            rewritten = parse_turns(text)
            if rewritten is None or [t.speaker for t in rewritten] != [t.speaker for t in turns]:
                status = "fallback_turns" if status == "ok" else status
            else:
                turns = rewritten
            chunks = conversation_chunks(turns, split_sentences, s.chunk_sentences, s.chunk_overlap,
                                         s.chunk_min_words)
            text = "\n".join(line for line, _ in framed_lines(turns, split_sentences, s.chunk_sentences))
        if s.unit_dates and unit.timestamp:
            chunks = [dated(c, unit.timestamp) for c in chunks]
            text = dated(text, unit.timestamp)
        return chunks, text, status

    async def extract(self, unit: Unit) -> tuple[list[tuple[ChunkRecord, OperatorOutput | None,
                                                             SpaceTimeOutput | None]], str]:
        """All chunks of one chapter with their Operator and space-time output; and coref status."""
        text, status = await self.coref(unit.text)
        chunks, text, status = self.chunk_texts(unit, text, status)
        records = [ChunkRecord(id=f"{unit.id}.{i}", chapter=unit.id, index=i, text=c) for i, c in enumerate(chunks)]
        # The first chunk alone, then the rest at once: its situate call leaves the chapter in
        # the server's prompt cache, so the other chunks' situate calls reuse that prefix instead
        # of each slot computing it cold at the same moment (same requests, same replies).
        outs = [await self.chunk(records[0], text)] if records else []
        outs += await asyncio.gather(*(self.chunk(r, text) for r in records[1:]))
        return [(r, op, st) for r, (op, st) in zip(records, outs, strict=True)], status


def outputs_of(rec: ChunkRecord) -> tuple[OperatorOutput | None, SpaceTimeOutput | None]:
    """The validated outputs saved in a chunk record (to re-reconcile without any model call)."""
    op = OperatorOutput.model_validate(rec.operator) if rec.operator is not None else None
    st = SpaceTimeOutput.model_validate(rec.space_time) if rec.space_time is not None else None
    return op, st
