"""Associative fusion: a new frame meets its most similar frames in memory; an LLM judge says
whether they describe one event (verdict.py reads the reply: prompt version 2 merged on the
level alone, version 3 only when the reply says it is one event and agrees with itself).

Before the judge, two model-free gates: a merge that would make a frame span more than
`max_provenance` passages is not judged, and with `veto_days` set a pair whose dates or
participants conflict (veto.py) is not judged either; both are counted, vetoed pairs listed in
`Memory.vetoed`. A merge unions the provenance pointers (so one frame retrieves evidence
scattered over several passages) and rewrites summary and events with one call. Every judged
pair is recorded (frames, similarity, verdict, reason, stage; under version 3 also the reply's
identity check, why it did not merge, and the two frame texts the judge read) so an analyst can
audit what was merged and why (`memeval audit seem-render RUN --merges`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memeval.model_access.errors import JsonOutputError

from . import verdict as verdicts
from .frames import Frame
from .prompts import judge_messages, merge_messages
from .schemas import FrameOutput
from .veto import DateParts, conflict


@dataclass
class Memory:
    """The episodic layer: frames, one vector per frame, and the fusion audit log."""

    frames: list[Frame] = field(default_factory=list)
    vectors: np.ndarray | None = None
    decisions: list[dict[str, Any]] = field(default_factory=list)
    next_id: int = 0
    vetoed: list[dict[str, Any]] = field(default_factory=list)  # pairs never judged (veto.py)

    def new_id(self) -> str:
        self.next_id += 1
        return f"F{self.next_id}"

    def to_json(self) -> dict[str, Any]:
        out = {"frames": [f.to_json() for f in self.frames], "decisions": self.decisions, "next_id": self.next_id}
        return {**out, "vetoed": self.vetoed} if self.vetoed else out  # saved runs never vetoed

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Memory:
        return cls([Frame.from_json(f) for f in d["frames"]], None, list(d["decisions"]), int(d["next_id"]),
                   list(d.get("vetoed", [])))


def union_provenance(a: list[str], b: list[str], order: dict[str, int]) -> list[str]:
    """Both frames' passages, each once, in corpus order."""
    return sorted(dict.fromkeys([*a, *b]), key=lambda p: order.get(p, len(order)))


class Fusion:
    def __init__(self, llm: Any, embedder: Any, *, top_k: int = 3, threshold: float = 0.6,
                 judge_max_tokens: int = 120, merge_max_tokens: int = 600, max_provenance: int | None = None,
                 prompt_version: int = 3, veto_days: int | None = 3):
        if top_k < 1:
            raise ValueError("seem fusion_top_k must be >= 1")
        if max_provenance is not None and max_provenance < 2:
            raise ValueError("seem fusion_max_provenance must be null or >= 2")
        if veto_days is not None and veto_days < 0:
            raise ValueError("seem fusion_veto_days must be null or >= 0")
        if prompt_version not in verdicts.SCHEMAS:
            raise ValueError(f"seem prompt_version must be one of {sorted(verdicts.SCHEMAS)}, not {prompt_version!r}")
        self.max_provenance, self.veto_days, self.prompt_version = max_provenance, veto_days, prompt_version
        self.skipped = 0  # candidates not judged because a merge would exceed max_provenance
        self.llm, self.embedder = llm, embedder
        self.top_k, self.threshold = top_k, threshold
        self.judge_max_tokens, self.merge_max_tokens = judge_max_tokens, merge_max_tokens

    def reset(self) -> None:
        """Zero the per-build counters (one Fusion serves every corpus of a run)."""
        self.skipped = 0

    async def _vector(self, frame: Frame) -> np.ndarray:
        return (await self.embedder.embed([frame.text()], "document"))[0]

    async def judge(self, new: Frame, old: Frame) -> verdicts.Verdict:
        """The judge's verdict on one pair (Frame A = the frame in memory, B = the new one)."""
        v = self.prompt_version
        try:
            reply, _ = await self.llm.complete_json(judge_messages(old.text(), new.text(), v), verdicts.SCHEMAS[v],
                                                    max_tokens=self.judge_max_tokens)
        except JsonOutputError as exc:
            return verdicts.failed(exc, v)
        return verdicts.read(reply)

    async def merge(self, old: Frame, new: Frame, order: dict[str, int]) -> tuple[Frame, str]:
        """One rewrite call; when it fails, a concatenation (nothing is lost either way)."""
        prov = union_provenance(old.provenance, new.provenance, order)
        merged_from = [*old.merged_from, new.id, *new.merged_from]
        try:
            out, _ = await self.llm.complete_json(merge_messages(old.body(), new.body()), FrameOutput,
                                                  max_tokens=self.merge_max_tokens)
            return Frame(old.id, out.summary, [e.model_dump(mode="json") for e in out.events], prov,
                         merged_from), "ok"
        except JsonOutputError:
            return Frame(old.id, f"{old.summary} {new.summary}".strip(), [*old.events, *new.events][:8],
                         prov, merged_from), "rewrite_failed"

    async def add(self, memory: Memory, frame: Frame, order: dict[str, int], stage: str = "batch",
                  written: Mapping[str, list[DateParts]] | None = None) -> str:
        """Fuse `frame` into `memory`: merged into an existing frame (returns its id) or appended.
        `written`: the calendar dates written in each passage (the veto's fallback dates)."""
        vec = await self._vector(frame)
        if memory.frames and memory.vectors is not None:
            sims = memory.vectors @ vec
            for i in [int(j) for j in np.argsort(-sims)[:self.top_k]]:
                if sims[i] < self.threshold:
                    break
                old = memory.frames[i]
                if self.max_provenance and len(set(old.provenance) | set(frame.provenance)) > self.max_provenance:
                    self.skipped += 1  # a frame spanning too many passages is no longer one event
                    continue
                pair = {"new": frame.id, "existing": old.id, "similarity": round(float(sims[i]), 4)}
                why = conflict(old, frame, self.veto_days, written) if self.veto_days is not None else None
                if why is not None:  # not one event by its own slots: no judge call
                    memory.vetoed.append({**pair, "veto": why, "stage": stage, "new_provenance": frame.provenance,
                                          "existing_provenance": old.provenance,
                                          "texts": {"existing": old.text(), "new": frame.text()}})
                    continue
                v = await self.judge(frame, old)
                decision: dict[str, Any] = {**pair, "level": v.level, "reason": v.reason, "stage": stage,
                                            "new_provenance": frame.provenance,
                                            "existing_provenance": old.provenance, **v.record()}
                if v.check is not None:  # version 3: what the judge read, for a reader to audit
                    decision["texts"] = {"existing": old.text(), "new": frame.text()}
                if v.merge:
                    merged, status = await self.merge(old, frame, order)
                    decision.update(merged=True, rewrite=status)
                    memory.decisions.append(decision)
                    memory.frames[i] = merged
                    memory.vectors[i] = await self._vector(merged)
                    return merged.id
                decision["merged"] = False
                memory.decisions.append(decision)
        memory.frames.append(frame)
        memory.vectors = vec[None, :] if memory.vectors is None else np.vstack([memory.vectors, vec])
        return frame.id


async def embed_frames(embedder: Any, frames: list[Frame]) -> np.ndarray | None:
    if not frames:
        return None
    return await embedder.embed([f.text() for f in frames], "document")


def decision_counts(decisions: list[dict[str, Any]]) -> dict[str, Any]:
    """judged, merged, per level; under version 3 also why judged pairs did not merge."""
    counts: dict[str, Any] = {"judged": len(decisions), "merged": 0, "strong": 0, "moderate": 0, "weak": 0}
    refused: Counter[str] = Counter()
    for d in decisions:
        counts[d["level"]] = counts.get(d["level"], 0) + 1
        counts["merged"] += int(bool(d.get("merged")))
        if d.get("refused"):
            refused[d["refused"]] += 1
    if any("check" in d for d in decisions):
        counts["refused"] = dict(sorted(refused.items()))
    return counts
