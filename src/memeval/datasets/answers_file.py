"""The imported-answers format: answers produced anywhere, for one dataset's questions, as JSON Lines.

Line 1 is a header object (who answered, with what, where the file came from); every other line is
one answer, keyed by the framework's question id. `memeval import-answers` turns such a file into an
ordinary run folder (methods/imported.py answers from it), so the judge and score stages, rescore,
health, report and compare read it like any run. docs/IMPORTED_ANSWERS.md documents the fields.

A file is read whole and checked before any model is built: every problem of one kind is counted and
shown in one error (`AnswersFileError`), so a broken file is fixed in one pass, not line by line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memeval.model_access.errors import ConfigError

from .integrity import sha256_of

FORMAT = "memeval-answers/1"
HEADER_REQUIRED = ("format", "system", "answering_model", "dataset", "source", "licence")
HEADER_TEXT = ("name", "system", "system_version", "answering_model", "licence", "dataset", "data_version")
ROW_KEYS = frozenset({"question_id", "answer", "context", "published_verdict", "tokens", "latency_ms", "extra"})
TOKEN_KEYS = frozenset({"prompt", "completion", "context"})
NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
SHOWN = 5  # examples an error shows of each kind


class AnswersFileError(ConfigError):
    """The answers file is malformed or does not fit the run's dataset (one error per kind)."""


@dataclass(frozen=True)
class AnswerRow:
    """One imported answer. `published_verdict`: the source's own judge verdict(s), as published
    (a bool, a number, or one per judge run); `extra`: source fields kept as they were."""

    question_id: str
    answer: str
    context: str | None = None
    published_verdict: Any = None
    tokens: dict[str, int] | None = None
    latency_ms: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"question_id": self.question_id, "answer": self.answer}
        for k in ("context", "published_verdict", "tokens", "latency_ms"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        if self.extra:
            out["extra"] = self.extra
        return out


@dataclass
class AnswersFile:
    path: Path
    sha256: str
    header: dict[str, Any]
    rows: list[AnswerRow]

    @property
    def name(self) -> str:
        """The short name the run is filed under (the header's `name`, else the system's, slugged)."""
        return str(self.header.get("name") or slug(str(self.header["system"])))

    def by_id(self) -> dict[str, AnswerRow]:
        return {r.question_id: r for r in self.rows}


def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9_.-]+", "-", text.lower()).strip("-.")
    return s or "imported"


def _shown(items: list[str], total: int | None = None) -> str:
    total = len(items) if total is None else total
    more = f"; ... and {total - SHOWN} more" if total > SHOWN else ""
    return "; ".join(items[:SHOWN]) + more


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _verdict_problem(v: Any) -> str | None:
    if v is None or isinstance(v, bool) or _is_number(v):
        return None
    if isinstance(v, list) and v and all(isinstance(x, bool) or _is_number(x) for x in v):
        return None
    return f"published_verdict must be a bool, a number or a non-empty list of them, not {json.dumps(v)[:60]}"


def _row_problems(obj: Any) -> list[str]:
    if not isinstance(obj, dict):
        return [f"not a JSON object but {type(obj).__name__}"]
    out = []
    unknown = sorted(set(obj) - ROW_KEYS)
    if unknown:
        out.append(f"unknown field(s) {unknown} (allowed: {sorted(ROW_KEYS)})")
    qid = obj.get("question_id")
    if not isinstance(qid, str) or not qid.strip():
        out.append("question_id must be a non-empty string")
    if not isinstance(obj.get("answer"), str):
        out.append(f"answer must be a string, not {type(obj.get('answer')).__name__}")
    if obj.get("context") is not None and not isinstance(obj["context"], str):
        out.append("context must be a string or null")
    if (p := _verdict_problem(obj.get("published_verdict"))) is not None:
        out.append(p)
    tokens = obj.get("tokens")
    if tokens is not None and not (isinstance(tokens, dict) and set(tokens) <= TOKEN_KEYS and all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in tokens.values())):
        out.append(f"tokens must map {sorted(TOKEN_KEYS)} to counts >= 0")
    lat = obj.get("latency_ms")
    if lat is not None and not (_is_number(lat) and lat >= 0):
        out.append("latency_ms must be a number >= 0")
    if obj.get("extra") is not None and not isinstance(obj["extra"], dict):
        out.append("extra must be an object")
    return out


def header_problems(header: Any) -> list[str]:
    """What is wrong with a header object (empty: nothing)."""
    if not isinstance(header, dict):
        return ["line 1 must be the header object"]
    out = [f"header lacks {k!r}" for k in HEADER_REQUIRED if header.get(k) in (None, "", [], {})]
    if header.get("format") not in (None, FORMAT):
        out.append(f"header format is {header.get('format')!r}; this reader knows {FORMAT!r}")
    out += [f"header {k!r} must be a string" for k in HEADER_TEXT
            if header.get(k) is not None and not isinstance(header[k], str)]
    if header.get("name") is not None and isinstance(header["name"], str) and not NAME.match(header["name"]):
        out.append(f"header name {header['name']!r} must be lower-case letters, digits, '_', '.', '-'")
    judge = header.get("judge")
    if judge is not None and not (isinstance(judge, dict) and judge.get("verdict")):
        out.append("header judge must be an object with 'verdict' (what a published verdict means), or null")
    prompt = header.get("answer_prompt")
    if prompt is not None and not isinstance(prompt, str | dict):
        out.append("header answer_prompt must be a name, a text or an object {name, text, sha256}")
    return out


def read_answers(path: Path | str) -> AnswersFile:
    """Read and check an answers file; one AnswersFileError naming every problem found."""
    path = Path(path)
    if not path.is_file():
        raise AnswersFileError(f"no answers file {path}")
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].strip():
        raise AnswersFileError(f"{path}: empty; line 1 must be the header object (docs/IMPORTED_ANSWERS.md)")
    try:
        header = json.loads(lines[0])
    except json.JSONDecodeError as exc:
        raise AnswersFileError(f"{path}: line 1 (the header) is not JSON: {exc}") from None
    problems = header_problems(header)
    if problems:
        raise AnswersFileError(f"{path}: {len(problems)} header problem(s): {_shown(problems)}")
    bad: list[str] = []
    rows: list[AnswerRow] = []
    lines_of: dict[str, list[int]] = {}
    for n, text in enumerate(lines[1:], start=2):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            bad.append(f"line {n}: not JSON ({exc.msg})")
            continue
        found = _row_problems(obj)
        if found:
            bad.append(f"line {n}: {', '.join(found)}")
            continue
        rows.append(AnswerRow(obj["question_id"], obj["answer"], obj.get("context"), obj.get("published_verdict"),
                              obj.get("tokens"), obj.get("latency_ms"), obj.get("extra") or {}))
        lines_of.setdefault(obj["question_id"], []).append(n)
    if bad:
        raise AnswersFileError(f"{path}: {len(bad)} of {len(lines) - 1} answer lines are malformed: {_shown(bad)}")
    if not rows:
        raise AnswersFileError(f"{path}: the header is followed by no answer")
    dups = [f"{q} (lines {', '.join(map(str, ns))})" for q, ns in lines_of.items() if len(ns) > 1]
    if dups:
        raise AnswersFileError(f"{path}: {len(dups)} question id(s) appear more than once: {_shown(dups)}")
    verdicts = sum(r.published_verdict is not None for r in rows)
    if verdicts and not header.get("judge"):
        raise AnswersFileError(f"{path}: {verdicts} rows carry a published_verdict but the header names no judge "
                               "(give header.judge with its model and what a verdict means)")
    return AnswersFile(path, sha256_of(path), header, rows)


def write_answers(path: Path | str, header: dict[str, Any], rows: Iterable[AnswerRow]) -> str:
    """Write an answers file (header first, rows in the order given); returns its sha256. The
    header is checked first, so a reader never writes a file read_answers would refuse for it."""
    header = {"format": FORMAT, **header}
    problems = header_problems(header)
    if problems:
        raise AnswersFileError(f"header problem(s): {_shown(problems)}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(header, ensure_ascii=False) + "\n")
        for r in rows:
            fh.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
    tmp.replace(path)
    return sha256_of(path)


@dataclass(frozen=True)
class Fit:
    """How a file's ids meet the run: every run question answered; `outside` = answers to questions
    of the dataset that the run did not select (left out of the run, counted in meta.json)."""

    outside: list[str]


def check_dataset(answers: AnswersFile, name: str, version: str, known: Iterable[str],
                  notes: Iterable[str] = ()) -> None:
    """The file is for this dataset (name, and data version when the header gives one) and every
    id is one of its questions; else one error, before any model is built."""
    where = answers.path
    if str(answers.header["dataset"]) != name:
        raise AnswersFileError(f"{where} holds answers for dataset {answers.header['dataset']!r}, but the run "
                               f"loads {name!r}: choose dataset=... to match the file (or import another file)")
    saved = answers.header.get("data_version")
    if saved and str(saved) != version:
        raise AnswersFileError(f"{where} was aligned with {name} data version {saved!r}, but this machine's data "
                               f"is {version!r}: the question ids may not mean the same questions; realign the file "
                               "against this data (its converter), or use the data it was made for")
    ids = set(known)
    unknown = [r.question_id for r in answers.rows if r.question_id not in ids]
    if unknown:
        note = f" ({'; '.join(notes)})" if notes else ""
        raise AnswersFileError(f"{where}: {len(unknown)} of {len(answers.rows)} question ids are not questions of "
                               f"{name}{note}: {_shown(unknown)}")


def check_coverage(answers: AnswersFile, run_ids: list[str]) -> Fit:
    """Every question of the run has an answer in the file; else one error naming the missing."""
    have = {r.question_id for r in answers.rows}
    missing = [q for q in run_ids if q not in have]
    if missing:
        raise AnswersFileError(f"{answers.path}: {len(missing)} of the run's {len(run_ids)} questions have no answer "
                               f"in the file: {_shown(missing)} (select the file's questions: leave subset.* and the "
                               "loader's filters unset, and the run takes exactly the file's ids)")
    wanted = set(run_ids)
    return Fit(outside=[r.question_id for r in answers.rows if r.question_id not in wanted])
