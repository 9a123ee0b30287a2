"""GSW's compact wire format (`gsw-lines/1`): Operator and space-time replies as one record a line.

Why: the local index is bound by the Operator's generated tokens, and in a one-line JSON reply
most of them are keys, quotes and brackets. This layout carries the same data (it decodes into
the same pydantic models, schemas.py) in about half the tokens (scripts/bench_gsw_format.py):

    e1 Tobin Marwen                        an entity: its id, then its name
     r mail boat rower                     a role of the entity above (indented one space)
     s waiting out the storm               a state of the role above
    v rowed the mail boat                  an action (verb phrase)
     who Who rowed the mail boat? = e1     a question about the action: kind, question, answer
     why Why did he wait? = the storm      ... answered in words when no entity fits
     why Why was the parcel sent?          ... open: no answer
    f When will he row back? = e1 e3       a question about what may come next, with its entities

Space-time: `space island of Orran = e1 e2`, `time June 2, 2029 = e1`, and `space = e1 e2` for
entities together with no place named (value null). A reply with nothing is the line `none`.

After ` = ` come the answer's ids (e<N>), then any answer in words. Text is written bare; a value
a bare field cannot hold (a newline, surrounding spaces, a ` = ` where one is read as the
separator, a leading quote) is written as a JSON string, and an id that is not e<N> as `#` and a
JSON string, so decode(encode(x)) == x for every valid output. The decoder also takes the layout
unindented, with blank lines or inside Markdown fences; a refused reply's error names the line.
A last line without its newline that does not parse is dropped when lines before it did: a reply
cut by max_tokens keeps its complete lines instead of failing the way truncated JSON did.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import ValidationError

from memeval.model_access.text_format import TextFormat

from .grammar import operator_grammar, spacetime_grammar
from .schemas import QUESTION_KINDS, OperatorOutput, SpaceTimeOutput

WIRE_VERSION = "gsw-lines/1"  # joins the index identity of compact runs (method.params)

_ID = re.compile(r"e\d+")
_KINDS = frozenset(QUESTION_KINDS) | {"whose", "which", "whence", "whither"}  # normalised by the schema
_DECODER = json.JSONDecoder()
Line = tuple[Any, ...]


class WireError(ValueError):
    """A reply line that does not fit the layout; the message names the line."""


# -- fields ------------------------------------------------------------------------------------

def _text(raw: str) -> tuple[str, bool]:
    """A text field and whether it was a JSON string."""
    s = raw.strip()
    if len(s) >= 2 and s[0] == s[-1] == '"':
        try:
            value = json.loads(s)
        except ValueError:
            return s, False
        if isinstance(value, str):
            return value, True
    return s, False


def _split_eq(rest: str) -> tuple[str, str | None]:
    """(left, right) at the first ` = ` (a trailing ` =` gives an empty right), or (rest, None)."""
    padded = f" {rest} "
    i = padded.find(" = ")
    return (rest, None) if i < 0 else (padded[1:i], padded[i + 3:-1])


def _with_answer(rest: str) -> tuple[str, bool, str | None]:
    """(text, was it a JSON string, the part after ` = ` or None): a leading JSON string may hold
    ` = ` itself."""
    if rest.startswith('"'):
        try:
            value, end = _DECODER.raw_decode(rest)
        except ValueError:
            value = None
        if isinstance(value, str):
            left, right = _split_eq(rest[end:])
            if not left.strip():
                return value, True, right
    left, right = _split_eq(rest)
    return (*_text(left), right)


def _answer(raw: str) -> tuple[list[str], str]:
    """Ids (e<N> or #"...") first, then the answer in words."""
    ids: list[str] = []
    s = raw.strip()
    while s:
        m = _ID.match(s)
        if m and (m.end() == len(s) or s[m.end()] == " "):
            ids.append(m.group())
            s = s[m.end():].lstrip()
            continue
        if s.startswith('#"'):
            try:
                value, end = _DECODER.raw_decode(s, 1)
            except ValueError:
                break
            if isinstance(value, str) and (end == len(s) or s[end] == " "):
                ids.append(value)
                s = s[end:].lstrip()
                continue
        break
    return ids, _text(s)[0]


def _only_ids(raw: str | None) -> list[str]:
    ids, words = _answer(raw or "")
    if words:
        raise WireError(f"after ' = ' come entity ids (e1 e2 ...), not {words[:40]!r}")
    return ids


def _ref(eid: str) -> str:
    return eid if _ID.fullmatch(eid) else "#" + _quoted(eid)


def _quoted(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


# -- lines -------------------------------------------------------------------------------------

def _parse(line: str) -> Line:
    """One line as a tuple: ("entity", id, name), ("role", text), ("state", text), ("verb", text),
    ("question", kind, question, ids, answer), ("forward", question, ids),
    ("link", kind, value or None, ids), ("none",)."""
    s = line.strip()
    tag, _, rest = s.partition(" ")
    if _ID.fullmatch(tag):
        return "entity", tag, _text(rest)[0]
    if s.startswith('#"'):  # an id that is not e<N>, as a JSON string
        try:
            eid, end = _DECODER.raw_decode(s, 1)
        except ValueError:
            eid, end = None, 0
        if isinstance(eid, str) and (end == len(s) or s[end] == " "):
            return "entity", eid, _text(s[end:])[0]
    if tag in ("r", "s", "v"):
        return {"r": "role", "s": "state", "v": "verb"}[tag], _text(rest)[0]
    if tag == "f":
        question, _, right = _with_answer(rest)
        return "forward", question, _only_ids(right)
    if tag.lower() in _KINDS:
        question, _, right = _with_answer(rest)
        ids, words = _answer(right) if right is not None else ([], "")
        return "question", tag, question, ids, words
    if tag in ("space", "time"):
        value, quoted, right = _with_answer(rest)
        return "link", tag, value if value or quoted else None, _only_ids(right)
    if s.lower() == "none":
        return ("none",)
    raise WireError(f"unknown line start {tag[:20]!r}: a line starts with an id (e1), r, s, v, f, a question "
                    f"word ({', '.join(QUESTION_KINDS[:-1])}), space or time")


def _emit(options: Iterator[str], want: Line) -> str:
    """The first written form of a line that reads back as `want` (bare fields first)."""
    for line in options:
        try:
            if "\n" not in line and _parse(line) == want:
                return line
        except WireError:
            pass
    raise AssertionError(f"no written form of {want!r}")  # a JSON-quoted form always reads back


def _forms(build: Callable[..., str], n: int) -> Iterator[str]:
    """`build` with each combination of its n fields bare (False) or JSON-quoted (True)."""
    for mask in range(2 ** n):
        yield build(*[bool(mask >> i & 1) for i in range(n)]).rstrip()


def _field(value: str, quote: bool) -> str:
    return _quoted(value) if quote else value


def _tagged(tag: str, value: str, kind: str) -> str:
    return _emit(_forms(lambda q: f"{tag} {_field(value, q)}", 1), (kind, value))


def _entity_line(eid: str, name: str) -> str:
    return _emit(_forms(lambda q: f"{_ref(eid)} {_field(name, q)}", 1), ("entity", eid, name))


def _question_line(kind: str, question: str, ids: list[str], words: str) -> str:
    def build(qq: bool, qw: bool) -> str:
        answer = " ".join([*map(_ref, ids), *([_field(words, qw)] if words else [])])
        return f"{kind} {_field(question, qq)}" + (f" = {answer}" if answer else "")
    return _emit(_forms(build, 2), ("question", kind, question, list(ids), words))


def _forward_line(question: str, ids: list[str]) -> str:
    tail = f" = {' '.join(map(_ref, ids))}" if ids else ""
    return _emit(_forms(lambda q: f"f {_field(question, q)}{tail}", 1), ("forward", question, list(ids)))


def _link_line(kind: str, value: str | None, ids: list[str]) -> str:
    tail = f" = {' '.join(map(_ref, ids))}" if ids else ""
    if value is None:
        return f"{kind}{tail}"
    return _emit(_forms(lambda q: f"{kind} {_field(value, q)}{tail}", 1), ("link", kind, value, list(ids)))


def _lines(text: str) -> Iterator[tuple[int, str, Line | None]]:
    """(line number, line, parsed) for each line that is not blank or a fence; parsed is None for
    an unterminated last line after good ones that does not parse (cut short: dropped); any other
    bad line raises WireError (so a reply of prose alone is refused, not read as empty)."""
    rows = text.split("\n")
    read = False
    for n, line in enumerate(rows, 1):
        if not line.strip() or line.strip().startswith("```"):
            continue
        try:
            parsed = _parse(line)
        except WireError as exc:
            if n == len(rows) and read:  # no newline after it: cut short
                yield n, line, None
                continue
            raise WireError(f"line {n} ({line.strip()[:60]!r}): {exc}") from None
        read = True
        yield n, line, parsed


def _bad(n: int, line: str, why: str) -> WireError:
    return WireError(f"line {n} ({line.strip()[:60]!r}): {why}")


# -- Operator ------------------------------------------------------------------------------------

def encode_operator(op: OperatorOutput) -> str:
    """An Operator output in the layout (the worked example, dry runs, the format bench)."""
    out: list[str] = []
    for e in op.entities:
        out.append(_entity_line(e.id, e.name))
        for r in e.roles:
            out.append(" " + _tagged("r", r.role, "role"))
            out += [" " + _tagged("s", s, "state") for s in r.states]
    for v in op.verb_phrases:
        out.append(_tagged("v", v.phrase, "verb"))
        out += [" " + _question_line(q.kind, q.question, q.answer_entity_ids, q.answer_text) for q in v.questions]
    out += [_forward_line(f.question, f.entity_ids) for f in op.forward_questions]
    return "\n".join(out or ["none"]) + "\n"


def decode_operator(text: str) -> OperatorOutput:
    """An Operator reply in the layout, validated as OperatorOutput (the schema's bounds apply)."""
    entities: list[dict[str, Any]] = []
    verbs: list[dict[str, Any]] = []
    forward: list[dict[str, Any]] = []
    under, nothing = None, False  # the head kind the next indented line belongs to
    for n, line, rec in _lines(text):
        if rec is None:
            continue
        kind = rec[0]
        if nothing or (kind == "none" and (entities or verbs or forward)):
            raise _bad(n, line, "'none' stands alone: it means the passage gives nothing")
        if kind == "entity":
            entities.append({"id": rec[1], "name": rec[2], "roles": []})
        elif kind == "role" and under == "entity":
            entities[-1]["roles"].append({"role": rec[1], "states": []})
        elif kind == "state" and under == "entity" and entities[-1]["roles"]:
            entities[-1]["roles"][-1]["states"].append(rec[1])
        elif kind == "verb":
            verbs.append({"phrase": rec[1], "questions": []})
        elif kind == "question" and under == "verb":
            verbs[-1]["questions"].append({"kind": rec[1], "question": rec[2], "answer_entity_ids": rec[3],
                                           "answer_text": rec[4]})
        elif kind == "forward":
            forward.append({"question": rec[1], "entity_ids": rec[2]})
        elif kind == "none":
            nothing = True
        else:
            parent = {"role": "an entity line (e1 ...)", "state": "a role line (r ...)",
                      "question": "an action line (v ...)"}.get(kind)
            raise _bad(n, line, f"a {kind} line belongs under {parent}" if parent else f"no {kind} line in an "
                       "Operator reply")
        under = kind if kind in ("entity", "verb", "forward") else under
    return _validated(OperatorOutput, {"entities": entities, "verb_phrases": verbs, "forward_questions": forward})


# -- space-time ----------------------------------------------------------------------------------

def encode_spacetime(st: SpaceTimeOutput) -> str:
    out = [_link_line(link.kind, link.value, link.entity_ids) for link in st.links]
    return "\n".join(out or ["none"]) + "\n"


def decode_spacetime(text: str) -> SpaceTimeOutput:
    links: list[dict[str, Any]] = []
    nothing = False
    for n, line, rec in _lines(text):
        if rec is None:
            continue
        if rec[0] == "none" and not links and not nothing:
            nothing = True
        elif rec[0] == "link" and not nothing:
            links.append({"kind": rec[1], "value": rec[2], "entity_ids": rec[3]})
        else:
            raise _bad(n, line, "'none' stands alone" if nothing or rec[0] == "none" else
                       "a space-time line is `space PLACE = e1 e2` or `time TIME = e1 e2`")
    return _validated(SpaceTimeOutput, {"links": links})


def _validated(model: Any, data: dict[str, Any]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:  # only strings and lists: the bounds truncate, so rare
        raise WireError(f"{model.__name__}: {exc}") from None


# tokens_vs_json: `python scripts/bench_gsw_format.py` on results/epbench20-local's stored replies
# (tests/test_gsw_wire.py checks both against a fresh re-encoding)
OPERATOR_FORMAT = TextFormat(f"{WIRE_VERSION} operator", OperatorOutput, decode_operator, encode_operator,
                             operator_grammar(), tokens_vs_json=0.490)
SPACETIME_FORMAT = TextFormat(f"{WIRE_VERSION} space-time", SpaceTimeOutput, decode_spacetime, encode_spacetime,
                              spacetime_grammar(), tokens_vs_json=0.365)
