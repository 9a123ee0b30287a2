"""A user's own corpus and questions (`dataset=custom dataset.path=DIR`), format in docs/CUSTOM_DATASET.md.

DIR holds `units.jsonl` (chapters, sessions or documents) and `questions.jsonl`. Every problem
is collected and reported at once, each naming file, line and field, before any model is built:
a bad line found after an hour of indexing would waste the hour and the money.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memeval.model_access.errors import ConfigError

from .types import ContextCap, Corpus, Dataset, Question, Unit

UNITS, QUESTIONS = "units.jsonl", "questions.jsonl"
DEFAULT_CORPUS = "main"
UNIT_FIELDS = {"id", "text", "corpus", "title", "date", "order"}
QUESTION_FIELDS = {"id", "question", "answer", "corpus", "gold_units", "strata", "date"}
# attrs the protocol sets itself; a stratum of the same name would be overwritten
RESERVED_STRATA = {"answer_kind", "question_date", "strata_keys", "strata", "question_id", "corpus_id",
                   "question", "gold", "gold_units"}
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")  # unit and corpus ids become file names
MAX_SHOWN = 25


class CustomDataError(ConfigError):
    """A malformed custom dataset; the message lists every problem as FILE:LINE: field ...: ..."""


@dataclass
class _Problems:
    items: list[str] = field(default_factory=list)

    def add(self, path: Path, line: int | None, fld: str | None, msg: str) -> None:
        where = f"{path}:{line}" if line else str(path)
        self.items.append(f"{where}: " + (f"field '{fld}': " if fld else "") + msg)

    def raise_if_any(self, root: Path) -> None:
        if not self.items:
            return
        shown = self.items[:MAX_SHOWN]
        more = f"\n  ... and {len(self.items) - MAX_SHOWN} more" if len(self.items) > MAX_SHOWN else ""
        raise CustomDataError(
            f"Custom dataset {root} is malformed ({len(self.items)} problem(s)); fix them and rerun "
            "(format: docs/CUSTOM_DATASET.md):\n  " + "\n  ".join(shown) + more)


def read_jsonl(path: Path, problems: _Problems) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; undecodable or non-object lines are problems."""
    out = []
    for n, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.add(path, n, None, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column "
                         f"{exc.start + 1}); save the file as UTF-8")
            continue
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.add(path, n, None, f"not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(obj, dict):
            problems.add(path, n, None, f"expected a JSON object, got {type(obj).__name__}")
            continue
        out.append((n, obj))
    return out


def _unknown_fields(obj: dict[str, Any], allowed: set[str], path: Path, n: int, p: _Problems) -> None:
    for key in obj:
        if key not in allowed:
            near = difflib.get_close_matches(key, sorted(allowed), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else f" (allowed: {', '.join(sorted(allowed))})"
            p.add(path, n, key, "unknown field" + hint)


def _id(obj: dict[str, Any], key: str, path: Path, n: int, p: _Problems, strict: bool) -> str | None:
    """An id as a string (ints accepted); strict ids must be file-name safe."""
    value = obj.get(key)
    if value is None:
        p.add(path, n, key, "missing (required)")
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        p.add(path, n, key, f"must be a string or an integer, got {type(value).__name__}")
        return None
    text = str(value)
    if strict and not _ID.match(text):
        p.add(path, n, key, f"{text!r} is not a valid id (letters, digits, '.', '_', '-'; at most 100; "
              "ids become file names of index artifacts)")
        return None
    if not strict and not text.strip():
        p.add(path, n, key, "must not be empty")
        return None
    return text


def _opt_str(obj: dict[str, Any], key: str, path: Path, n: int, p: _Problems) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        p.add(path, n, key, f"must be a string, got {type(value).__name__}")
        return None
    return value


def _corpus_id(obj: dict[str, Any], path: Path, n: int, p: _Problems) -> str | None:
    return _id(obj, "corpus", path, n, p, strict=True) if "corpus" in obj else DEFAULT_CORPUS


def _content_hash(units: tuple[Unit, ...]) -> str:
    """Part of the corpus id: index artifacts are stored per corpus id, so an edited corpus (or
    another dataset's corpus of the same name) never reuses a stale index."""
    blob = json.dumps([[u.id, u.title, u.timestamp, u.text] for u in units], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:10]


class CustomLoader:
    """Loads DIR/units.jsonl and DIR/questions.jsonl; see docs/CUSTOM_DATASET.md.

    The natural cap is the most gold units any question has (a perfect retriever always fits);
    without gold units the cap must be given (`context_cap.units=N`).
    """

    def __init__(self, path: str | None, context_cap_units: int | None = None,
                 context_cap_tokens: int | None = None, strata_key: str | None = None,
                 name: str | None = None):
        self.root = Path(path) if path else None
        self.cap_units = context_cap_units
        self.cap_tokens = context_cap_tokens
        self.strata_key = strata_key
        self.name = name
        self._units_broken = False

    def load(self) -> Dataset:
        if self.root is None:  # raised here, not in __init__, so run.py prints it as a plain error
            raise ConfigError("dataset=custom needs the folder of your data: dataset.path=DIR "
                              "(DIR holds units.jsonl and questions.jsonl; see docs/CUSTOM_DATASET.md)")
        for fname in (UNITS, QUESTIONS):
            if not (self.root / fname).is_file():
                raise CustomDataError(f"Custom dataset {self.root}: {fname} is missing (a dataset folder "
                                      f"holds {UNITS} and {QUESTIONS}; see docs/CUSTOM_DATASET.md)")
        problems = _Problems()
        corpora = self._corpora(self.root, problems)
        self._units_broken = bool(problems.items)
        questions = self._questions(self.root, corpora, problems)
        problems.raise_if_any(self.root)
        strata_keys = list(dict.fromkeys(k for q in questions for k in q.attrs["strata_keys"]))
        key = self.strata_key or (strata_keys[0] if strata_keys else "answer_kind")
        if key not in strata_keys and key != "answer_kind":
            raise ConfigError(f"dataset.loader.strata_key={key!r} is not a stratum of any question in "
                              f"{self.root / QUESTIONS} (strata present: {strata_keys or 'none'})")
        digest = hashlib.sha256(b"".join((self.root / f).read_bytes() for f in (UNITS, QUESTIONS))).hexdigest()
        name = self.name or "custom-" + (re.sub(r"[^A-Za-z0-9._-]+", "_", self.root.resolve().name) or "data")
        return Dataset(name=name, version=f"{name}@{digest[:12]}", corpora={c.id: c for c in corpora.values()},
                       questions=questions,
                       natural_cap=self._cap(questions), strata_key=key,
                       notes=[f"custom dataset from {self.root} (not a published benchmark)"],
                       group_keys=strata_keys or ["answer_kind"])

    def _cap(self, questions: list[Question]) -> ContextCap:
        units = self.cap_units
        if units is None:
            most = max((len(q.gold_units) for q in questions), default=0)
            if most == 0:
                raise ConfigError(
                    f"Custom dataset {self.root}: no question lists gold_units, so the context cap "
                    "cannot be derived; set it: context_cap.units=N (and/or context_cap.tokens=N)")
            units = most
        return ContextCap(max_units=units, max_tokens=self.cap_tokens)

    def _corpora(self, root: Path, p: _Problems) -> dict[str, Corpus]:
        path = root / UNITS
        rows: dict[str, list[tuple[int, Unit, float | None]]] = {}
        seen: dict[tuple[str, str], int] = {}
        for n, obj in read_jsonl(path, p):
            _unknown_fields(obj, UNIT_FIELDS, path, n, p)
            uid = _id(obj, "id", path, n, p, strict=True)
            cid = _corpus_id(obj, path, n, p)
            text = obj.get("text")
            if text is None:
                p.add(path, n, "text", "missing (required)")
            elif not isinstance(text, str) or not text.strip():
                p.add(path, n, "text", "must be a non-empty string")
            title, date = _opt_str(obj, "title", path, n, p), _opt_str(obj, "date", path, n, p)
            order = obj.get("order")
            if order is not None and (isinstance(order, bool) or not isinstance(order, int | float)):
                p.add(path, n, "order", f"must be a number, got {type(order).__name__}")
                order = None
            if uid is None or cid is None or not isinstance(text, str):
                continue
            if (cid, uid) in seen:
                p.add(path, n, "id", f"duplicate unit id {uid!r} in corpus {cid!r} (first on line {seen[cid, uid]})")
                continue
            seen[cid, uid] = n
            rows.setdefault(cid, []).append((n, Unit(id=uid, text=text.strip(), position=0, timestamp=date,
                                                     title=title), order))
        if not rows and not p.items:
            p.add(path, None, None, "holds no units")
        corpora = {}
        for cid, units in rows.items():
            with_order = [r for r in units if r[2] is not None]
            if with_order and len(with_order) != len(units):
                first = next(n for n, _, o in units if o is None)
                p.add(path, first, "order", f"missing, but other units of corpus {cid!r} have one "
                      "(give every unit of a corpus an order, or none)")
            if with_order:
                units = sorted(units, key=lambda r: (r[2] if r[2] is not None else 0, r[0]))
            ordered = tuple(Unit(u.id, u.text, i, u.timestamp, u.title) for i, (_, u, _) in enumerate(units))
            corpora[cid] = Corpus(id=f"{cid}-{_content_hash(ordered)}", units=ordered)
        return corpora

    def _questions(self, root: Path, corpora: dict[str, Corpus], p: _Problems) -> list[Question]:
        path = root / QUESTIONS
        out: list[Question] = []
        seen: dict[str, int] = {}
        for n, obj in read_jsonl(path, p):
            _unknown_fields(obj, QUESTION_FIELDS, path, n, p)
            qid = _id(obj, "id", path, n, p, strict=False)
            if qid is not None and qid in seen:
                p.add(path, n, "id", f"duplicate question id {qid!r} (first on line {seen[qid]})")
                qid = None
            elif qid is not None:
                seen[qid] = n
            text = obj.get("question")
            if text is None:
                p.add(path, n, "question", "missing (required)")
            elif not isinstance(text, str) or not text.strip():
                p.add(path, n, "question", "must be a non-empty string")
                text = None
            gold, kind = self._answer(obj, path, n, p)
            cid = self._question_corpus(obj, corpora, path, n, p)
            units = self._gold_units(obj, corpora.get(cid) if cid else None, path, n, p)
            strata = self._strata(obj, path, n, p)
            date = _opt_str(obj, "date", path, n, p)
            if qid is None or text is None or gold is None or cid is None or units is None or strata is None:
                continue
            attrs: dict[str, Any] = {**strata, "answer_kind": kind, "strata_keys": list(strata)}
            if date:
                attrs["question_date"] = date
            out.append(Question(id=qid, corpus_id=corpora[cid].id, text=text.strip(), gold=gold, gold_units=units,
                                attrs=attrs))
        if not out and not p.items:
            p.add(path, None, None, "holds no questions")
        return out

    @staticmethod
    def _answer(obj: dict[str, Any], path: Path, n: int, p: _Problems) -> tuple[tuple[str, ...] | None, str]:
        ans = obj.get("answer")
        if ans is None:
            p.add(path, n, "answer", "missing (required: a list of items, or a free-text string)")
        elif isinstance(ans, str):
            if ans.strip():
                return (ans.strip(),), "text"
            p.add(path, n, "answer", "must not be an empty string")
        elif isinstance(ans, list):
            if all(isinstance(a, str) and a.strip() for a in ans):
                return tuple(a.strip() for a in ans), "items"
            p.add(path, n, "answer", "a list answer must hold non-empty strings only")
        else:
            p.add(path, n, "answer", f"must be a list of strings or a string, got {type(ans).__name__}")
        return None, ""

    @staticmethod
    def _question_corpus(obj: dict[str, Any], corpora: dict[str, Corpus], path: Path, n: int,
                         p: _Problems) -> str | None:
        if "corpus" not in obj:
            if len(corpora) > 1:
                p.add(path, n, "corpus", f"missing: {UNITS} holds several corpora ({', '.join(sorted(corpora))})"
                      ", so each question must name its corpus")
                return None
            return next(iter(corpora), None)
        cid = _id(obj, "corpus", path, n, p, strict=True)
        if cid is not None and cid not in corpora:
            p.add(path, n, "corpus", f"unknown corpus {cid!r} (corpora in {UNITS}: {', '.join(sorted(corpora))})")
            return None
        return cid

    def _gold_units(self, obj: dict[str, Any], corpus: Corpus | None, path: Path, n: int,
                    p: _Problems) -> tuple[str, ...] | None:
        raw = obj.get("gold_units", [])
        if raw is None:
            return ()
        if not isinstance(raw, list) or any(isinstance(u, bool) or not isinstance(u, str | int) for u in raw):
            p.add(path, n, "gold_units", "must be a list of unit ids (strings or integers)")
            return None
        ids = [str(u) for u in raw]
        if len(set(ids)) != len(ids):
            p.add(path, n, "gold_units", "lists a unit more than once")
            return None
        if corpus is None:
            return None
        known = {u.id for u in corpus.units}
        bad = [u for u in ids if u not in known]
        if bad:
            note = f"; {UNITS} has problems of its own, fix those first" if self._units_broken else ""
            p.add(path, n, "gold_units", f"unknown unit id(s) {', '.join(map(repr, bad))} in corpus "
                  f"{corpus.id.rsplit('-', 1)[0]!r} (not in {UNITS}{note})")
            return None
        return tuple(ids)

    @staticmethod
    def _strata(obj: dict[str, Any], path: Path, n: int, p: _Problems) -> dict[str, Any] | None:
        raw = obj.get("strata", {})
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            p.add(path, n, "strata", f"must be an object of attribute: value, got {type(raw).__name__}")
            return None
        ok = True
        for k, v in raw.items():
            if k in RESERVED_STRATA:
                p.add(path, n, f"strata.{k}", f"reserved name; rename the stratum (reserved: "
                      f"{', '.join(sorted(RESERVED_STRATA))})")
                ok = False
            elif isinstance(v, dict | list) or v is None:
                p.add(path, n, f"strata.{k}", "must be a string, number or boolean")
                ok = False
        return dict(raw) if ok else None
