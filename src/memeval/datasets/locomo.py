"""LoCoMo (Maharana et al., ACL 2024): 10 long two-person conversations of dated sessions.

One corpus per conversation; its units are the sessions (id = session number, timestamp = the
session's date and time). All five question categories are loaded. The category numbering is
the single most common source of disagreement between published LoCoMo harnesses, so the names
live here, once, and every metrics file and table repeats them.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from memeval.model_access.errors import ConfigError

from .integrity import DataFile, verify
from .types import ContextCap, Corpus, Dataset, GoldAudit, Question, Unit

REL = "locomo/locomo10.json"
AUDIT_REL = "locomo/audit/gold_audit.jsonl"
# A row flags its question's gold when audit A calls it score-corrupting (not a wrong evidence
# citation alone) or audit B lists it at all: the 143 questions SOURCES.md names.
AUDIT_RULE = "audit_a score_corrupting, or any audit_b label"
# every file with its sha256 (../shared/data/SOURCES.md): what the data step fetches and verifies
DATA_FILES = (
    DataFile(REL, "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4", "original",
             "https://raw.githubusercontent.com/snap-research/LoCoMo/main/data/locomo10.json"),
    DataFile(AUDIT_REL, "78b3bba45dd0dafc0aa88cd5af39ab260f2e6ad54e0b703c3293e66f1cd104ed", "derived", optional=True),
    DataFile("locomo/audit/known_wrong_answers.jsonl",
             "a626aff598ce8c19533385c5e9dd0aebfcac91d96d6b9890968e28c8ccedf204", "derived", optional=True),
)

# The one category mapping of this project. It follows the data itself: category 1 questions
# cite 2+ sessions in 95% of cases (multi-hop), category 4 cite exactly one (single-hop),
# category 2 asks "when", category 5 has an `adversarial_answer`. Some papers swap 1 and 4.
CATEGORY_NAMES: dict[str, str] = {
    "1": "multi-hop",
    "2": "temporal",
    "3": "open-domain",
    "4": "single-hop",
    "5": "adversarial",
}
# What a correct reply to a category-5 question says: the conversation does not support it.
NOT_MENTIONED = "Not mentioned in the conversation"

_SESSION = re.compile(r"^session_(\d+)$")
_DIA = re.compile(r"D:?(\d+):(\d+)")


def render_turn(turn: dict[str, Any]) -> str:
    """'Speaker: text', plus the caption of a shared photo (the only trace of the image)."""
    text = f"{turn.get('speaker', '?')}: {str(turn.get('text', '')).strip()}"
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def parse_evidence(evidence: list[Any]) -> list[str]:
    """Dialogue ids 'D<session>:<turn>'; tolerates the file's few malformed entries
    ('D8:6; D9:17', 'D:11:26', 'D9:1 D4:4')."""
    out: list[str] = []
    for item in evidence or []:
        for m in _DIA.finditer(str(item)):
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return list(dict.fromkeys(out))


def sessions_of(dia_ids: list[str]) -> list[str]:
    return list(dict.fromkeys(d[1:].split(":")[0] for d in dia_ids))


class LoCoMoLoader:
    """Loads locomo10.json. `context_cap_units` null = the smallest number of sessions that holds
    all evidence of `cap_coverage` of the questions (5 sessions at 0.99). `conversations` keeps
    only those sample ids (e.g. [conv-30]); the derived cap still comes from all ten, so a
    one-conversation run keeps the full benchmark's cap."""

    # the data's licence, as a bundle's README states it (../shared/data/SOURCES.md)
    licence = ("LoCoMo (Maharana et al., ACL 2024; github snap-research/LoCoMo): CC BY-NC 4.0 "
               "(non-commercial use only; attribution required)")
    data_files = DATA_FILES  # integrity.manifests() collects them through the plugin registry

    def __init__(self, data_dir: str, context_cap_units: int | None = None,
                 context_cap_tokens: int | None = None, cap_coverage: float = 0.99,
                 categories: list[int] | None = None, conversations: list[str] | None = None):
        self.root = Path(data_dir)
        self.cap_units = context_cap_units
        self.cap_tokens = context_cap_tokens
        self.cap_coverage = cap_coverage
        self.categories = {int(c) for c in categories} if categories else None
        self.conversations = [str(c) for c in conversations] if conversations else None

    def load(self) -> Dataset:
        entry = verify(self.root, REL, DATA_FILES)
        raw = json.loads((self.root / REL).read_text(encoding="utf-8"))
        corpora: dict[str, Corpus] = {}
        questions: list[Question] = []
        for sample in raw:
            corpus = self._corpus(sample)
            corpora[corpus.id] = corpus
            present = {u.id for u in corpus.units}
            questions.extend(self._question(qa, f"{corpus.id}-q{i}", corpus.id, present)
                             for i, qa in enumerate(sample["qa"]))
        cap = self.derive_cap(questions)  # from every question, whatever the filters
        audit = read_gold_audit(self.root, {q.id: q for q in questions})
        notes = []
        if self.conversations is not None:
            unknown = [c for c in self.conversations if c not in corpora]
            if unknown:
                raise ConfigError(f"unknown LoCoMo conversation(s) {unknown}; dataset.loader."
                                  f"conversations takes sample ids from: {', '.join(corpora)}")
            corpora = {c: corpora[c] for c in self.conversations}
            questions = [q for q in questions if q.corpus_id in corpora]
            notes.append(f"LoCoMo restricted to conversations {self.conversations}")
        if self.categories is not None:
            questions = [q for q in questions if q.attrs["category"] in self.categories]
            notes.append(f"LoCoMo restricted to categories {sorted(self.categories)}")
        kept = {q.id for q in questions}
        audit = GoldAudit(audit.source, audit.rule, {k: v for k, v in audit.flagged.items() if k in kept},
                          audit.available)
        return Dataset(
            name="locomo", version=f"locomo10@{(entry.sha256 or 'nohash')[:12]}-{entry.status}",
            corpora=corpora, questions=questions, natural_cap=cap, strata_key="category", notes=notes,
            gold_audit=audit,
        )

    def derive_cap(self, questions: list[Question]) -> ContextCap:
        units = self.cap_units
        if units is None:
            need = sorted(len(q.gold_units) for q in questions)
            units = max(1, need[max(0, math.ceil(self.cap_coverage * len(need)) - 1)]) if need else 5
        return ContextCap(max_units=units, max_tokens=self.cap_tokens)

    @staticmethod
    def _corpus(sample: dict[str, Any]) -> Corpus:
        conv = sample["conversation"]
        numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION.match(k)))
        units = []
        for pos, n in enumerate(numbers):
            turns = conv[f"session_{n}"]
            date = conv.get(f"session_{n}_date_time")
            units.append(Unit(id=str(n), text="\n\n".join(render_turn(t) for t in turns),
                              position=pos, timestamp=str(date) if date else None))
        if not units:
            raise ConfigError(f"LoCoMo conversation {sample.get('sample_id')} has no sessions")
        return Corpus(id=str(sample["sample_id"]), units=tuple(units))

    @staticmethod
    def _question(qa: dict[str, Any], qid: str, corpus_id: str, present: set[str]) -> Question:
        category = int(qa["category"])
        evidence = parse_evidence(qa.get("evidence", []))
        attrs: dict[str, Any] = {"category": category, "category_name": CATEGORY_NAMES[str(category)],
                                 "evidence": evidence}
        if category == 5:
            gold = NOT_MENTIONED
            attrs["adversarial_answer"] = str(qa.get("adversarial_answer", ""))
            if qa.get("answer") is not None:  # two category-5 items also carry an `answer`
                attrs["answer_field"] = str(qa["answer"])
        else:
            if qa.get("answer") is None:
                raise ConfigError(f"LoCoMo question {qid} (category {category}) has no answer")
            gold = str(qa["answer"])  # a few answers are ints (years)
        units = tuple(s for s in sessions_of(evidence) if s in present)
        return Question(id=qid, corpus_id=corpus_id, text=str(qa["question"]), gold=(gold,),
                        gold_units=units, attrs=attrs)


def read_gold_audit(root: Path, questions: dict[str, Question]) -> GoldAudit:
    """The flagged questions of locomo/audit/gold_audit.jsonl (sha256-checked), by this project's
    question id `<sample_id>-q<qa_index>`; each row's category must be its question's, so a
    misaligned file is refused. A missing file is an audit that is not available, said so."""
    path = root / AUDIT_REL
    if not path.exists():
        return GoldAudit(AUDIT_REL, AUDIT_RULE, {}, available=False)
    entry = verify(root, AUDIT_REL, DATA_FILES)
    flagged: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        qid = f"{row['sample_id']}-q{int(row['qa_index'])}"
        q = questions.get(qid)
        if q is None or int(q.attrs["category"]) != int(row["category"]):
            raise ConfigError(f"{path}: row {row['sample_id']} #{row['qa_index']} (category {row['category']}) "
                              "does not match locomo10.json; the audit file belongs to another LoCoMo version")
        a, b = row.get("audit_a") or {}, row.get("audit_b") or {}
        if a.get("score_corrupting") or b:
            flagged[qid] = "; ".join([*([f"audit_a {a['type']}"] if a.get("score_corrupting") else []),
                                      *([f"audit_b {b.get('label', '?')}"] if b else [])])
    return GoldAudit(f"{AUDIT_REL}@{(entry.sha256 or 'nohash')[:12]}", AUDIT_RULE, flagged)
