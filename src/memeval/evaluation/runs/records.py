"""Typed run records: a predictions line, a judgments line, meta.json and metrics.json's top level.

Why: a run's artifacts are read by a dozen modules as plain dicts, so a line written wrong (no
`question_id`, a count saved as text) used to surface as a KeyError far from the file. Here each
artifact is checked where it is read or written (evaluation/runs/folder.py does it for every
file named below) and a bad one is a `RecordError` naming the file, the line, the field and the
fix. Readers still get dicts.

Writing through a model changes no byte: a record keeps the key order it was given, dumps only
the keys it holds (a declared field that was absent stays absent), and keeps numbers as they came
(an int stays an int), so `json.dumps(record.model_dump())` is today's writer's text
(tests/test_records.py checks every bundled run). Keys a protocol or dataset adds are kept as
extras (`extra="allow"`): judgments lines share only their core.

Each record's `VERSION` is the run format whose layout it has (meta.json `run_format`, absent =
0; evaluation/runs/upgrade.py stamps it and refuses newer ones). An older layout migrates on
read when the reader says which format it holds (validation context `{"run_format": n}`, or
the `upgraded_*` helpers below); each migration sits beside its field. Without that context a
record is read as written, which is what the byte-for-byte replays compare.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)


def _integer(v: Any) -> Any:
    """A whole number kept as it came (numpy's too: pydantic's int/float would convert, and an
    int turned float is other bytes)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ValueError(f"should be a whole number, not {type(v).__name__}")
    return v


Int = Annotated[Any, BeforeValidator(_integer)]
StrList = Annotated[list[str], Field(strict=False)]  # a tuple is written as a list: accept it
AnyList = Annotated[list[Any], Field(strict=False)]
Obj = dict[str, Any]


class RecordError(ValueError):
    """A run artifact that does not have the shape its readers rely on."""


class RunRecord(BaseModel):
    """Common behaviour: saved key order, only the keys held, migrations by run format."""

    model_config = ConfigDict(extra="allow", strict=True, validate_default=False)
    VERSION: ClassVar[int] = 0  # the run format whose layout this record has
    _order: tuple[str, ...] = PrivateAttr(default=())
    _moved_out: dict[str, Any] = PrivateAttr(default_factory=dict)  # what a migration took out

    @model_validator(mode="wrap")
    @classmethod
    def _migrated_in_saved_order(cls, data: Any, handler: Callable[[Any], RunRecord],
                                 info: ValidationInfo) -> RunRecord:
        saved = data
        if isinstance(data, dict):
            fmt = _upgrading(info, data)
            if fmt is not None:
                data = cls.migrate(dict(data), fmt, info.context or {})
        obj = handler(data)
        if isinstance(data, dict):
            obj._order = tuple(data)
            obj._moved_out = {k: v for k, v in saved.items() if k not in data}
        return obj

    @classmethod
    def migrate(cls, data: dict[str, Any], fmt: int, context: dict[str, Any]) -> dict[str, Any]:
        """Keys an older layout lacks or held elsewhere (a record whose keys all stayed: none)."""
        return data

    @model_serializer(mode="wrap")
    def _as_saved(self, handler: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
        out = handler(self)
        held = self.model_fields_set | set(self.__pydantic_extra__ or {})
        keys = [k for k in self._order if k in held and k in out]
        keys += [k for k in out if k in held and k not in self._order]  # set after validation
        return {k: out[k] for k in keys}


def _upgrading(info: ValidationInfo, data: dict[str, Any]) -> int | None:
    """The run format to migrate from (None: read as written). meta.json states its own."""
    context = info.context or {}
    if context.get("run_format") is None:
        return None
    if context["run_format"] == "own":
        return int(data.get("run_format") or 0)
    return int(context["run_format"])


def _protocol_description(proto: Any, fmt: int, context: dict[str, Any]) -> Any:
    """An older protocol description as today's describe() writes it. Which keys a description
    of format `fmt` left out is its protocol class's history, found by the upgrade module
    (`upgrade_protocol_description`), which the reader passes as context "describe" (records
    import nothing of it: the upgrade module reads records); without it, as saved."""
    describe = context.get("describe")
    return describe(proto, fmt) if describe is not None else proto


class Prediction(RunRecord):
    """One predictions.jsonl line: the question as stored (Question.record(), with the dataset's
    own attributes as extras), then what the answer stage added. Unchanged since format 0."""

    VERSION: ClassVar[int] = 0
    question_id: str
    corpus_id: str | None = None
    question: str | None = None
    gold: AnyList | None = None
    gold_units: StrList | None = None
    answer: str | None = None
    context_text: str | None = None
    context_tokens: Int | None = None
    context_chapters: StrList | None = None
    context_unit_tokens: Obj | None = None
    usage: Obj | None = None
    retrieval: Obj | None = None
    answered_by: Literal["shared", "method"] | None = None
    native_answer: Obj | None = None
    cap_audit: Obj | None = None


# the score stage's per-question diagnostics; format 0 wrote them into judgments.jsonl, format 1
# on into diagnostics.jsonl
DIAGNOSTIC_KEYS = ("failure_label", "gold_recall", "all_gold_present", "gold_token_share")


class Judgment(RunRecord):
    """One judgments.jsonl line: the core every protocol writes; the rest is the protocol's own."""

    VERSION: ClassVar[int] = 1
    question_id: str
    judge_prompt: str | None = None

    @classmethod
    def migrate(cls, data: dict[str, Any], fmt: int, context: dict[str, Any]) -> dict[str, Any]:
        """Format 0: the score stage's diagnostics were appended to the judge's line; they move
        out (`diagnostics`), leaving the line as today's judge stage writes it."""
        if fmt < 1 and "failure_label" in data:
            for k in DIAGNOSTIC_KEYS:
                data.pop(k, None)
        return data

    @property
    def diagnostics(self) -> dict[str, Any]:
        """The diagnostics a format-0 line held, read with its format (empty otherwise)."""
        return {k: self._moved_out[k] for k in DIAGNOSTIC_KEYS if k in self._moved_out}


class Meta(RunRecord):
    """meta.json: what was run, on what, with which models; written when the run starts.
    Format 2 added the dataset facts (population, gold_audit, repeats), format 3 the indexing
    model, the experiment and the plugin's code."""

    VERSION: ClassVar[int] = 3
    run_format: Int | None = None  # absent: format 0
    method: str | None = None
    dataset: str | None = None
    data_version: str | None = None
    data_notes: AnyList | None = None
    answer_model: str | None = None
    answer_model_revision: str | None = None
    index_model: str | None = None
    index_model_revision: str | None = None
    judge_model: str | None = None
    embedder: str | None = None
    context_cap: str | None = None
    subset: str | None = None
    n_questions: Int | None = None
    protocol: Obj | None = None

    @field_validator("protocol", mode="before")
    @classmethod
    def _protocol_today(cls, v: Any, info: ValidationInfo) -> Any:
        """Format 0 left the judge version out of the description, formats 0-2 EpBench's
        order judge version; keys added since the last format change may be absent in any."""
        if (info.context or {}).get("run_format") is None:
            return v
        return _protocol_description(v, int(info.data.get("run_format") or 0), info.context or {})

    question_ids: StrList | None = None
    answer_with: str | None = None
    imported: Obj | None = None
    experiment: Obj | None = None
    git_commit: str | None = None
    method_code: Obj | None = None
    versions: Obj | None = None
    strata_key: str | None = None
    group_keys: AnyList | None = None
    population: Obj | None = None
    gold_audit: Obj | None = None
    repeats: Obj | None = None
    cap_holds_corpus: Obj | None = None
    started: str | None = None

    @classmethod
    def migrate(cls, data: dict[str, Any], fmt: int, context: dict[str, Any]) -> dict[str, Any]:
        if fmt < cls.VERSION and "protocol" not in data:  # as upgrade_meta reads it
            data["protocol"] = None
        return data

    @property
    def format(self) -> int:
        return int(self.run_format or 0)


class Metrics(RunRecord):
    """metrics.json's top level as the score stage writes it: the keys every protocol's metrics
    share are typed, a protocol's own (buckets, categories, types...) are extras."""

    VERSION: ClassVar[int] = 3
    overall: Obj | None = None
    policy: str | None = None
    credit: str | None = None
    n_judge_failed: Int | None = None
    judge_failed_ids: AnyList | None = None
    cap_audit: Obj | None = None
    retrieval: Obj | None = None
    provenance: Obj | None = None

    @field_validator("provenance", mode="before")
    @classmethod
    def _described_today(cls, v: Any, info: ValidationInfo) -> Any:
        """The protocol description inside, as meta.json's is read (Meta.protocol)."""
        context = info.context or {}
        fmt = context.get("run_format")
        if fmt is None or not isinstance(v, dict):
            return v
        if fmt >= cls.VERSION and "protocol" not in v:
            return v
        return {**v, "protocol": _protocol_description(v.get("protocol"), int(fmt), context)}

    presentation: Obj | None = None
    # format 0 wrote no presentation block: the reader gives the run's protocol's (context
    # "presentation"); formats 0-1 no statistics blocks: computed by the reader's `blocks`
    statistics: Obj | None = None
    stratified: Obj | None = None
    gold_audit: Obj | None = None
    repeats: Obj | None = None
    questions_expected: Int | None = None  # a partial run's marks (completeness.py)
    questions_scored: Int | None = None

    @classmethod
    def migrate(cls, data: dict[str, Any], fmt: int, context: dict[str, Any]) -> dict[str, Any]:
        if fmt >= cls.VERSION:
            return data
        if fmt < 1 and context.get("presentation") is not None and "presentation" not in data:
            data["presentation"] = context["presentation"]
        blocks = context.get("blocks")
        if blocks is not None and "statistics" not in data:
            data.update(blocks())
        return data


# -- the files, and what a bad one says ----------------------------------------------------------

_FIXES = {
    "predictions.jsonl": ("the answer stage writes it (Question.record() plus the method's retrieval)",
                          "delete the line and rerun the same `memeval run` command (cached calls are free)"),
    "judgments.jsonl": ("the judge stage writes it (Protocol.judge() must return a line carrying question_id)",
                        "delete the line and rerun the same `memeval run` command (cached calls are free)"),
    "meta.json": ("the run writes it when it starts", "restore it from the run's bundle, or rerun the run"),
    "metrics.json": ("the score stage writes it", "`memeval rescore RUN_DIR` writes it again"),
}


_BY_NAME: dict[str, type[RunRecord]] = {"predictions.jsonl": Prediction, "judgments.jsonl": Judgment,
                                        "meta.json": Meta, "metrics.json": Metrics}


def record_for(name: str) -> type[RunRecord] | None:
    """The record of a run artifact by its file name (None: not a typed record); another
    policy's metrics (`metrics_<policy>.json`) are metrics."""
    if name.startswith("metrics_") and name.endswith(".json"):
        return Metrics
    return _BY_NAME.get(name)


def _field(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if not str(p).startswith("function-")]  # a validator's own step
    return ".".join(parts) or "(the whole record)"


def problem(exc: ValidationError) -> str:
    """The first few field problems of a failed validation, one phrase each."""
    out = []
    for e in exc.errors()[:3]:
        if e["type"] == "missing":
            out.append(f"field `{_field(e['loc'])}` is missing")
            continue
        msg = e["msg"].removeprefix("Value error, ")
        out.append(f"field `{_field(e['loc'])}`: {msg[0].lower()}{msg[1:]} (got {e['input']!r:.60})")
    more = len(exc.errors()) - 3
    return "; ".join(out) + (f"; and {more} more" if more > 0 else "")


def checked(name: str, obj: Any, where: str, reading: bool = True) -> RunRecord:
    """`obj` as the record its file `name` holds; a RecordError naming `where`, the field and
    the fix otherwise (`reading`: the fix for a saved file; else for the code writing it)."""
    model = record_for(name)
    if model is None:
        raise KeyError(f"{name} is not a typed run record")
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        key = "metrics.json" if model is Metrics else name
        writer, fix = _FIXES[key]
        tail = f"; {fix}" if reading else f"; {writer}"
        raise RecordError(f"{where}: {problem(exc)} (not a {key} record){tail}") from None


def checked_rows(name: str, rows: Iterable[dict[str, Any]], path: Any) -> list[dict[str, Any]]:
    """Rows read from a JSONL record file, each checked (line numbers count from 1); returned
    as read."""
    out = list(rows)
    for i, row in enumerate(out, 1):
        checked(name, row, f"{path}: line {i}")
    return out


def as_written(name: str, obj: Any, where: str) -> dict[str, Any]:
    """A record about to be written, checked and dumped (the same keys, order and values)."""
    return checked(name, obj, where, reading=False).model_dump()


# -- migrations, what evaluation/runs/upgrade.py's artifact part can delegate to ----------------

Describe = Callable[[Any, int], Any]  # (saved protocol description, run format) -> today's


def upgraded_meta(meta: dict[str, Any], describe: Describe | None = None) -> dict[str, Any]:
    """meta.json as today's code reads it (its own run_format says its layout); `describe`:
    what completes an older protocol description (upgrade.upgrade_protocol_description)."""
    return Meta.model_validate(meta, context={"run_format": "own", "describe": describe}).model_dump()


def upgraded_metrics(metrics: dict[str, Any], fmt: int, describe: Describe | None = None,
                     presentation: dict[str, Any] | None = None,
                     blocks: Callable[[], dict[str, Any]] | None = None) -> dict[str, Any]:
    """metrics.json of a run of format `fmt` as today's score stage writes it: the protocol
    description completed (`describe`), format 0's presentation block (the run's protocol's),
    and before format 2 the statistics blocks (`blocks`, unless the file has them)."""
    context = {"run_format": fmt, "describe": describe, "presentation": presentation, "blocks": blocks}
    return Metrics.model_validate(metrics, context=context).model_dump()


def upgraded_judgment(line: dict[str, Any], fmt: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A judgments line of a run of format `fmt` as today's judge stage writes it, and the
    score stage's diagnostics it held (format 0; empty otherwise)."""
    record = Judgment.model_validate(line, context={"run_format": fmt})
    return record.model_dump(), record.diagnostics
