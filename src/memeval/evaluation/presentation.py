"""How a protocol's results are shown, declared by the protocol itself.

The score stage writes a protocol's `Presentation` into metrics.json (the `presentation`
block); the report, compare, tracking and the notebooks read it from there and keep no table of
families, metric keys or labels of their own. So a new benchmark family is shown by declaring
its presentation in its protocol: no reader changes.

Everything here is plain data (strings and tuples), so it travels in metrics.json as JSON and
reads back equal (`Presentation.from_dict(p.to_dict()) == p`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

# how a table cell shows the value at its key (the readers render each kind the same way):
# pm: value ± its `<key>_std` sibling; value: the value alone; count: as text (e.g. n);
# pair: two keys "a/b" shown "a / b" (precision / recall); chronological: the Chronological
# Awareness dict or float; agreement: the LLM judge's own (raw) agreement with the matcher, from
# the block at the key (evaluation.agreement.judge_block: never a grounded credit's)
CELLS = ("pm", "value", "count", "pair", "chronological", "agreement")
# by_column: one row per run; an overall column, then one column per group (each the
#   `group_cell` of that group), then `columns` read from the run's metrics (key paths);
# by_row: one row per run and group (then `extra_groups`, then overall), `columns` read from
#   that group's metrics; `summary` rows follow, their value under the headline's column
LAYOUTS = ("by_column", "by_row")


@dataclass(frozen=True)
class Column:
    """One table column: its header, the key it shows, and how (one of CELLS)."""

    label: str
    key: str
    cell: str = "pm"

    def __post_init__(self) -> None:
        if self.cell not in CELLS:
            raise ValueError(f"column {self.label!r}: cell must be one of {CELLS}, not {self.cell!r}")


@dataclass(frozen=True)
class ReportTable:
    """One table of the comparison report, as data (tables.py renders it for every family)."""

    title: str
    layout: str
    columns: tuple[Column, ...] = ()
    group_cell: Column | None = None  # by_column: what each group's cell shows; its label heads "overall"
    extra_groups: tuple[tuple[str, str], ...] = ()  # by_row: (row label, metrics key) after the groups
    summary: tuple[Column, ...] = ()  # by_row: rows after overall, each `value` of a metrics key
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"table {self.title!r}: layout must be one of {LAYOUTS}, not {self.layout!r}")
        if self.layout == "by_column" and self.group_cell is None:
            raise ValueError(f"table {self.title!r}: a by_column table needs its group_cell")


@dataclass(frozen=True)
class Presentation:
    """A protocol's headline, groups and report tables.

    headline: key path in metrics.json, "<overall key>.<stat>" (e.g. "overall.f1"); every
      group's dict holds the same stat. label: how tables and figures name it ("F1").
    groups: the metrics.json key of the per-group dicts ("buckets"), None when there are none;
      group_label names them in the report ("cue bucket"); group_field is the per-question
      field they come from ("bucket": tracking's column, the retrieval diagnostics' groups).
    group_order: groups that form a scale, shown in this order and all of them in by_column
      tables (EpBench's cue buckets); () = in the order metrics.json lists them.
    group_names: the metrics.json key of a {group: name} map shown beside each group.
    stats: per-group statistics worth a chart of their own (tracking), headline first.
    question_score: the judgments.jsonl key holding a question's headline score as is, which
      `Protocol.question_scores` reads; None where the protocol computes it (credit, policy).
    tables: the report's tables; () = one table of every overall number.
    """

    headline: str
    label: str
    groups: str | None = None
    group_label: str = "group"
    group_field: str | None = None
    group_order: tuple[str, ...] = ()
    group_names: str | None = None
    stats: tuple[str, ...] = ()
    question_score: str | None = None
    tables: tuple[ReportTable, ...] = field(default=())

    def __post_init__(self) -> None:
        if "." not in self.headline:
            raise ValueError(f"headline must be a key path '<overall key>.<stat>', not {self.headline!r}")

    @property
    def overall(self) -> str:
        """The metrics.json key of the overall numbers ("overall")."""
        return self.headline.rsplit(".", 1)[0]

    @property
    def metric(self) -> str:
        """The headline statistic's key in the overall and every group dict ("f1")."""
        return self.headline.rsplit(".", 1)[1]

    def group_metrics(self, metrics: dict[str, Any]) -> dict[str, Any]:
        """A run's per-group metrics ({} when the protocol declares no groups)."""
        found = metrics.get(self.groups) if self.groups else None
        return found if isinstance(found, dict) else {}

    def ordered(self, seen: list[str]) -> list[str]:
        """The declared group order first, then any other group in the order seen."""
        return [*self.group_order, *(g for g in dict.fromkeys(seen) if g not in self.group_order)]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Presentation:
        """Back from metrics.json (lists to tuples); keys this code does not know are refused."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"presentation block has keys this code does not know: {unknown}")
        tables = tuple(_table(t) for t in d.get("tables") or ())
        return cls(**{**d, "group_order": tuple(d.get("group_order") or ()), "stats": tuple(d.get("stats") or ()),
                      "tables": tables})


def _table(d: dict[str, Any]) -> ReportTable:
    cell = d.get("group_cell")
    return ReportTable(title=d["title"], layout=d["layout"], columns=tuple(Column(**c) for c in d.get("columns") or ()),
                       group_cell=Column(**cell) if cell else None,
                       extra_groups=tuple((str(a), str(b)) for a, b in d.get("extra_groups") or ()),
                       summary=tuple(Column(**c) for c in d.get("summary") or ()),
                       notes=tuple(d.get("notes") or ()))
