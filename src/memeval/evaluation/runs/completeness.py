"""Which questions a run should hold, and which it holds: completeness is part of a run.

A run folder missing answers or verdicts (a run stopped part way, lines deleted, a torn last line
dropped) still scores: its mean is then over another question set than the one its table names.
Every reader asks here first: rescore refuses a partial run (unless --allow-partial, which marks
its metrics "n of N"), health fails it (`complete`), compare and report say so in their tables.

The expected set comes from what the run recorded: meta.json `question_ids` where a run lists
them, else `n_questions` (every run format records it) when the answers and verdicts present
number exactly that many (nothing is loaded: the common case, and a bundle's replay); else the
questions drawn again from the run's saved config and its benchmark data, with the runner's own
subset functions (datasets/subset.py), no model call. Where that data is not on this machine,
only the count is known.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from omegaconf import OmegaConf

from .folder import read_jsonl_file
from .records import checked
from .upgrade import read_config, saved_dataset

PREDICTIONS = "predictions.jsonl"
JUDGMENTS = "judgments.jsonl"
# the stage that writes each per-question file, and so redoes a line of it (folder.py's torn-line note)
OWNER = {PREDICTIONS: "answer", JUDGMENTS: "judge"}
FINISH = ("rerun the same `memeval run` command to finish it (what it already answered and judged "
          "comes from the cache: no new calls)")
FINISH_SHORT = "rerun its `memeval run` command to finish it (free from the cache)"


@dataclass(frozen=True)
class Completeness:
    """A run's expected questions against the answers and verdicts its files hold."""

    expected: frozenset[str] | None  # None: the ids are not known here (only the count, if that)
    n_expected: int | None  # None: neither meta.json nor the data say
    predicted: frozenset[str]
    judged: frozenset[str]

    @property
    def scored(self) -> frozenset[str]:
        """The questions with both an answer and a verdict (what the score stage can count)."""
        return self.predicted & self.judged if self.predicted else self.judged

    @property
    def missing(self) -> int:
        """Expected questions without an answer or a verdict (0 when nothing is expected: unknown)."""
        if self.expected is not None:
            return len(self.expected - self.scored)
        return max(0, (self.n_expected or 0) - len(self.scored))

    @property
    def partial(self) -> bool:
        return self.missing > 0

    def no_answer(self) -> int:
        if self.expected is not None:
            return len(self.expected - self.predicted)
        return max(0, (self.n_expected or 0) - len(self.predicted))

    def no_verdict(self) -> int:
        """Expected questions with an answer but no verdict."""
        if self.expected is not None:
            return len((self.expected & self.predicted) - self.judged)
        return max(0, len(self.predicted) - len(self.judged))

    def n_of_n(self) -> str:
        """"50 of 105 questions" (what a partial run's tables and metrics say)."""
        return f"{len(self.scored)} of {self.n_expected} questions"

    def gaps(self) -> str:
        """Where the missing questions are: "55 without an answer in predictions.jsonl, ..."."""
        parts = [f"{n} {what}" for n, what in ((self.no_answer(), f"without an answer in {PREDICTIONS}"),
                                               (self.no_verdict(), f"answered but without a verdict in {JUDGMENTS}"))
                 if n]
        return ", ".join(parts)

    def describe(self) -> str:
        """One phrase: "partial: 50 of 105 questions (55 without an answer in predictions.jsonl)"."""
        return f"partial: {self.n_of_n()} ({self.gaps()})"

    def marks(self) -> dict[str, int]:
        """metrics.json's record of a partial run (nothing for a complete one: its file is unchanged)."""
        if not self.partial or self.n_expected is None:
            return {}
        return {"questions_expected": self.n_expected, "questions_scored": len(self.scored)}


def _ids(rows: list[dict[str, Any]]) -> frozenset[str]:
    return frozenset(str(r["question_id"]) for r in rows if "question_id" in r)


def drawn_ids(run: Path, dataset: Any = None) -> frozenset[str] | None:
    """The run's questions drawn again from its saved config (subset.n/seed/ids/name/extra,
    within_units, index_units) and its benchmark data, as harness/build.py draws them; None when
    the data is not on this machine or the subset cannot be drawn here."""
    from memeval.datasets.subset import draw, first_units

    cfg = read_config(run)
    data = dataset if dataset is not None else saved_dataset(run)
    if data is None:
        return None
    sub = OmegaConf.to_container(cfg.get("subset") or OmegaConf.create({}), resolve=True)
    assert isinstance(sub, dict)
    try:
        n_index = sub.get("index_units")
        if n_index is not None:  # idempotent: the score stage hands in the data already cut
            data = first_units(data, int(n_index))
        chosen, _, _ = draw(data, cast("dict[str, Any]", sub))  # a config's keys are strings
    except (ValueError, KeyError):
        return None
    return frozenset(q.id for q in chosen)


def question_sets(run: Path, dataset: Any = None) -> tuple[frozenset[str] | None, frozenset[str], frozenset[str]]:
    """(expected ids, ids with a prediction, ids with a judgment); expected is None when only
    the count is known (use `completeness` for it)."""
    c = completeness(run, dataset)
    return c.expected, c.predicted, c.judged


def completeness(run: Path, dataset: Any = None, predictions: list[dict[str, Any]] | None = None,
                 judgments: list[dict[str, Any]] | None = None) -> Completeness:
    """The run's completeness; `predictions`/`judgments` where the caller has read them already,
    `dataset` where it holds the run's benchmark data (else read only when needed)."""
    run = Path(run)  # read, never created (RunFolder would make the folder)
    predicted = _ids(predictions if predictions is not None else read_jsonl_file(run / PREDICTIONS))
    judged = _ids(judgments if judgments is not None else read_jsonl_file(run / JUDGMENTS))
    meta = json.loads((run / "meta.json").read_text(encoding="utf-8")) if (run / "meta.json").exists() else {}
    if meta:  # a malformed meta.json says so here, not as a wrong count (records.py)
        checked("meta.json", meta, str(run / "meta.json"))
    listed = meta.get("question_ids")
    if isinstance(listed, list):
        ids = frozenset(map(str, listed))
        return Completeness(ids, len(ids), predicted, judged)
    n = meta.get("n_questions")
    count = int(n) if isinstance(n, int) and not isinstance(n, bool) else None
    scored = predicted & judged if predicted else judged
    if count is not None and len(predicted) == count and judged <= predicted and len(scored) == count:
        return Completeness(predicted, count, predicted, judged)  # every recorded question is here
    drawn = drawn_ids(run, dataset) if (run / "config.yaml").exists() else None
    if drawn is not None and (count is None or len(drawn) == count):
        return Completeness(drawn, len(drawn), predicted, judged)
    return Completeness(None, count, predicted, judged)  # the data is not here: the count alone


def refusal(run: Path, c: Completeness) -> str:
    """rescore's one line for a partial run: how many are missing and the two ways on."""
    return (f"{run} is partial: {c.missing} of its {c.n_expected} questions are missing ({c.gaps()}); "
            f"{FINISH}, or `memeval rescore --allow-partial {run}` to score the {len(c.scored)} it holds "
            f"(its metrics then say \"{c.n_of_n()}\")")
