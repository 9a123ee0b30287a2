"""LongMemEval (Wu et al., ICLR 2025): one haystack of dated chat sessions per question.

Each question brings its own haystack. Identical haystacks (same session ids, dates and content)
get the same corpus id, a content hash, so the harness indexes each distinct haystack once.
Sessions are ordered by date (the files list them in no fixed order). The S file here is a
partial, unverified assembly: the loader says so on stderr, in `Dataset.notes` (hence meta.json
and every table) and in the data version string.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memeval.model_access.errors import ConfigError
from memeval.model_access.tokenizer import count_tokens

from .integrity import DataFile, verify
from .types import ContextCap, Corpus, Dataset, Question, Unit

FILES = {
    "oracle": "longmemeval/longmemeval_oracle.json",
    "s": "longmemeval/longmemeval_s_cleaned.partial.json.gz",
}
# every file with its sha256 (../shared/data/SOURCES.md): what the data step fetches and verifies
DATA_FILES = (
    DataFile(FILES["oracle"], "821a2034d219ab45846873dd14c14f12cfe7776e73527a483f9dac095d38620c", "original",
             "https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/main/longmemeval_oracle.json"),
    DataFile(FILES["s"], "4ce8d5085377debceed2abc3aaa09239745b02f7b1e500b6b95d6846b56a9c2d", "unverified"),
)
QUESTION_TYPES = ("single-session-user", "single-session-assistant", "single-session-preference",
                  "temporal-reasoning", "knowledge-update", "multi-session")
S_WARNING = (
    "LongMemEval-S here is PARTIAL and UNVERIFIED: 499 of 500 instances (gpt4_7a0daae1 missing), "
    "assembled from third-party per-question files with no reference hash; its session dates "
    "differ from the oracle's and 76 haystacks hold a session dated after the question. Not "
    "comparable to published LongMemEval-S numbers."
)


def iter_json_array(path: Path, chunk_chars: int = 1 << 20) -> Iterator[dict[str, Any]]:
    """Yield the elements of a top-level JSON array one by one (plain or .gz).

    The S file is 277 MB of JSON; decoding it element by element keeps peak memory near one
    instance plus what the caller keeps, instead of the whole parse tree at once.
    """
    decoder = json.JSONDecoder()
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        buf, pos, eof, opened = "", 0, False, False
        while True:
            while pos < len(buf) and buf[pos] in " \t\r\n,":
                pos += 1
            if not opened and pos < len(buf):
                if buf[pos] != "[":
                    raise ConfigError(f"{path} is not a JSON array")
                opened, pos = True, pos + 1
                continue
            if pos < len(buf) and buf[pos] == "]":
                return
            try:
                if pos >= len(buf):
                    raise ValueError("need more input")
                item, end = decoder.raw_decode(buf, pos)
            except ValueError:
                if eof:
                    raise ConfigError(f"{path} ends inside a JSON value: truncated file?") from None
                chunk = f.read(chunk_chars)
                eof = not chunk
                buf, pos = buf[pos:] + chunk, 0
                continue
            yield item
            pos = end


def render_session(turns: list[dict[str, Any]]) -> str:
    """A session as 'role: content' turns separated by blank lines (turns become paragraphs)."""
    return "\n\n".join(f"{t.get('role', '?')}: {str(t.get('content', '')).strip()}" for t in turns)


def haystack_id(sessions: list[tuple[str, str, str]]) -> str:
    """Content hash of (session id, date, text) in order: identical haystacks share one index."""
    h = hashlib.sha256()
    for sid, date, text in sessions:
        for part in (sid, date, text):
            h.update(part.encode("utf-8"))
            h.update(b"\x00")
        h.update(b"\x01")
    return "lme-" + h.hexdigest()[:16]


class LongMemEvalLoader:
    """Loads `variant` oracle or s. Caps: null = derived from the data (see `derive_cap`)."""

    # the data's licence, as a bundle's README states it (../shared/data/SOURCES.md)
    licence = "LongMemEval (Wu et al., ICLR 2025; github xiaowu0162/LongMemEval): MIT"
    data_files = DATA_FILES  # integrity.manifests() collects them through the plugin registry

    def __init__(self, variant: str, data_dir: str, context_cap_units: int | None = None,
                 context_cap_tokens: int | None = None):
        if variant not in FILES:
            raise ConfigError(f"LongMemEval variant must be one of {sorted(FILES)}, not {variant!r}")
        self.variant = variant
        self.root = Path(data_dir)
        self.cap_units = context_cap_units
        self.cap_tokens = context_cap_tokens

    def load(self) -> Dataset:
        rel = FILES[self.variant]
        entry = verify(self.root, rel, DATA_FILES)
        corpora: dict[str, Corpus] = {}
        questions: list[Question] = []
        texts: dict[str, str] = {}  # one string object per distinct session text (S shares many)
        for raw in iter_json_array(self.root / rel):
            corpus = self._corpus(raw, texts)
            corpora.setdefault(corpus.id, corpus)
            questions.append(self._question(raw, corpora[corpus.id]))
        notes: list[str] = []
        if entry.status != "original":
            notes.append(S_WARNING if self.variant == "s" else
                         f"{rel} is {entry.status} (see ../shared/data/SOURCES.md)")
            print(f"WARNING: {notes[-1]}", file=sys.stderr)
        digest = (entry.sha256 or "nohash")[:12]
        return Dataset(
            name=f"longmemeval_{self.variant}", corpora=corpora, questions=questions,
            version=f"longmemeval-{self.variant}@{digest}-{entry.status}",
            natural_cap=self.derive_cap(questions, corpora), strata_key="question_type", notes=notes,
        )

    def derive_cap(self, questions: list[Question], corpora: dict[str, Corpus]) -> ContextCap:
        """Units: the most evidence sessions any question has (6); tokens: the most tokens that
        all of one question's evidence sessions take as shown to the answering model, so a
        perfect retriever always fits. YAML values override either."""
        units = self.cap_units
        tokens = self.cap_tokens
        if units is None:
            units = max((len(q.gold_units) for q in questions), default=1) or 1
        if tokens is None:
            need = 0
            for q in questions:
                corpus = corpora[q.corpus_id]
                need = max(need, sum(count_tokens(_block(corpus.unit(u))) + 2 for u in q.gold_units))
            tokens = need or None
        return ContextCap(max_units=units, max_tokens=tokens)

    @staticmethod
    def _corpus(raw: dict[str, Any], texts: dict[str, str]) -> Corpus:
        ids, dates, sessions = raw["haystack_session_ids"], raw["haystack_dates"], raw["haystack_sessions"]
        if not len(ids) == len(dates) == len(sessions):
            raise ConfigError(f"LongMemEval {raw['question_id']}: session ids, dates and sessions differ in length")
        rows: list[tuple[str, str, str]] = []
        seen: dict[str, int] = {}
        for sid, date, turns in zip(ids, dates, sessions, strict=True):
            text = render_session(turns)
            text = texts.setdefault(text, text)
            sid = str(sid)
            seen[sid] = seen.get(sid, 0) + 1
            rows.append((sid if seen[sid] == 1 else f"{sid}#{seen[sid]}", str(date), text))
        rows.sort(key=lambda r: r[1])  # 'YYYY/MM/DD (Day) HH:MM' sorts chronologically as text
        units = tuple(Unit(id=sid, text=text, position=i, timestamp=date)
                      for i, (sid, date, text) in enumerate(rows))
        return Corpus(id=haystack_id(rows), units=units)

    @staticmethod
    def _question(raw: dict[str, Any], corpus: Corpus) -> Question:
        qid = str(raw["question_id"])
        present = {u.id for u in corpus.units}
        evidence = [str(s) for s in raw.get("answer_session_ids", [])]
        return Question(
            id=qid, corpus_id=corpus.id, text=str(raw["question"]), gold=(str(raw["answer"]),),
            gold_units=tuple(s for s in evidence if s in present),
            attrs={"question_type": str(raw["question_type"]), "question_date": str(raw["question_date"]),
                   "is_abstention": qid.endswith("_abs"), "answer_session_ids": evidence},
        )


def _block(unit: Unit) -> str:
    """The unit as methods.base.unit_block shows it (kept in step with it for cap derivation)."""
    return f"### Session {unit.id} ({unit.timestamp})\n{unit.text}"
