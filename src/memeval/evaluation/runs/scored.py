"""Scored run folders as the report and `memeval compare` read them, and which runs
may be compared question by question."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from statistics import mean
from typing import Any

from hydra.errors import InstantiationException

from ..presentation import Presentation
from ..protocol import Protocol
from .blocks import thin_strata
from .completeness import FINISH_SHORT, Completeness, completeness
from .folder import RunFolder, artifact
from .health_file import Health, mark_of, read_health
from .index_usage import IndexUsage, read_index_usage
from .locate import folder_problem
from .presentation import presentation_for
from .scoring import load_protocol, read_metrics
from .upgrade import read_meta

PROVENANCE = ("answer_model", "judge_model", "policy", "credit", "data_version", "subset", "context_cap")


class ReportError(ValueError):
    """A report or comparison that cannot be made as asked (missing artifacts, incomparable runs)."""


@dataclass
class Run:
    """One run folder's artifacts, as the report needs them."""

    path: Path
    meta: dict[str, Any]
    metrics: dict[str, Any]
    usage: dict[str, Any]
    predictions: list[dict[str, Any]] = field(repr=False)
    judgments: list[dict[str, Any]] = field(repr=False)
    label: str = ""  # the method, or the folder name when one report holds two runs of a method

    @property
    def method(self) -> str:
        return str(self.meta.get("method") or self.path.name.rsplit("-", 1)[0])

    @property
    def dataset(self) -> str:
        return str(self.meta.get("dataset") or self.path.parent.name)

    @cached_property
    def presentation(self) -> Presentation:
        """How the run's protocol shows its results (headline, groups, report tables)."""
        return presentation_for(self.metrics, RunFolder(self.path))

    @property
    def question_ids(self) -> set[str]:
        return {p["question_id"] for p in self.predictions}

    @cached_property
    def completeness(self) -> Completeness:
        """The questions the run should hold against those it holds (evaluation/runs/completeness.py)."""
        return completeness(self.path, predictions=self.predictions, judgments=self.judgments)

    @property
    def partial_line(self) -> str | None:
        """A partial run's line under every table it is in (None: the run is complete)."""
        c = self.completeness
        if not c.partial:
            return None
        return (f"{self.label or self.method} is {c.describe()}: its numbers are over those questions only and "
                f"it is paired with no run; {FINISH_SHORT}")

    @property
    def mean_context_tokens(self) -> float | None:
        toks = [p["context_tokens"] for p in self.predictions if "context_tokens" in p]
        return mean(toks) if toks else None

    def provenance(self) -> dict[str, str]:
        """answering model, judge, policy, credit, data version, subset, cap: the setup of a number."""
        m = self.metrics
        policy = m.get("policy") or m.get("judge_prompt") or m.get("judge_prompts")
        subset = self.meta.get("subset")
        if self.completeness.partial:  # a partial run's questions are not its subset's: every table says so
            subset = f"{subset}; partial: {self.completeness.n_of_n()}"
        values = {**self.meta, "subset": subset, "policy": policy,
                  "credit": credit_label(m.get("credit", "–"), self.meta.get("protocol")),
                  "judge_model": _judge_label(_text(self.meta.get("judge_model")), self.meta.get("protocol"))}
        return {k: _text(values.get(k)) for k in PROVENANCE}

    def stage_tokens(self, stages: tuple[str, ...]) -> int:
        total = 0
        for name in stages:
            st = self.usage.get("stages", {}).get(name, {})
            for kind in ("fresh", "cached"):
                b = st.get(kind, {})
                total += int(b.get("prompt_tokens", 0)) + int(b.get("completion_tokens", 0))
        return total

    def cost(self, kind: str) -> float:
        return float(self.usage.get("totals", {}).get(kind, {}).get("cost_usd", 0.0))

    @cached_property
    def protocol(self) -> Protocol:
        """The run's protocol exactly as it was configured (its saved config.yaml)."""
        return load_protocol(RunFolder(self.path))

    @cached_property
    def question_scores(self) -> dict[str, float]:
        """Per-question headline score under the run's own protocol settings, every question."""
        return self.protocol.question_scores(self.judgments, self.predictions)

    @cached_property
    def headline_scores(self) -> dict[str, float]:
        """Per-question scores of the questions the headline counts (for paired tests)."""
        return self.protocol.headline_scores(self.judgments, self.predictions)

    @cached_property
    def _display_protocol(self) -> Protocol | None:
        """The protocol, for display corrections only: a run whose protocol class is gone still
        shows its tables from metrics.json's presentation block alone, uncorrected."""
        try:
            return self.protocol
        except (ImportError, InstantiationException):
            return None

    @cached_property
    def shown_metrics(self) -> dict[str, Any]:
        """metrics.json with the protocol's display-time corrections (Protocol.shown_metrics)."""
        p = self._display_protocol
        return self.metrics if p is None else p.shown_metrics(self.metrics, self.judgments, self.predictions)

    @property
    def weighted_overall(self) -> dict[str, Any] | None:
        """A stratified subset's overall weighted by each stratum's population share (the headline
        the papers report), as a cell {metric, metric_std, n}; None for a run on its whole
        population (metrics.json `stratified`, evaluation/runs/blocks.py)."""
        b = self.metrics.get("stratified") or {}
        value = b.get("weighted")
        if not isinstance(value, int | float) or isinstance(value, bool):
            return None
        std = None if thin_strata(b.get("sample") or {}) else b.get("weighted_std")  # blocks.MIN_PER_STRATUM
        return {b["metric"]: value, f"{b['metric']}_std": std, "n": b.get("n")}

    @cached_property
    def caveats(self) -> dict[str, str]:
        """Groups whose headline cell is not what the headline's label says (Protocol.group_caveats)."""
        p = self._display_protocol
        return {} if p is None else p.group_caveats(self.metrics)

    @cached_property
    def health(self) -> Health | None:
        """RUN_DIR/health.json (None: never checked)."""
        return read_health(self.path)

    @property
    def health_cell(self) -> str:
        """What every table's health column shows: the status and first failing message, or
        "not checked"."""
        return mark_of(self.health)

    @property
    def failed(self) -> bool:
        """A health check failed: the run's numbers may mean nothing (paired differences unstarred)."""
        return self.health is not None and self.health.status == "fail"

    @cached_property
    def index_usage(self) -> IndexUsage:
        """What the run's index took to build (its index folder's record, else this run's calls)."""
        return read_index_usage(self.path)

    @cached_property
    def clusters(self) -> dict[str, str] | None:
        """question id -> its cluster when the run's intervals resample clusters (metrics.json
        `statistics`: LoCoMo's conversations), else None (questions are resampled)."""
        if (self.metrics.get("statistics") or {}).get("resampling_unit", "question") == "question":
            return None
        return load_protocol(RunFolder(self.path)).resampling(self.predictions).clusters


def _judge_label(model: str, proto: Any) -> str:
    """The judge as tables name it: the model plus its protocol's judge version (meta read
    through the upgrade module always names it where the protocol versions its judge), so runs
    judged differently never share a label."""
    version = proto.get("judge_version") if isinstance(proto, dict) else None
    return model if version is None else f"{model} (judge version {version})"


def credit_label(credit: Any, proto: Any) -> str:
    """The credit as tables and figures name it: with the protocol's grounding version where it
    versions its grounding, so runs grounded differently never share a label."""
    version = proto.get("grounding_version") if isinstance(proto, dict) else None
    return _text(credit) if version is None else f"{_text(credit)}, grounding v{version}"


def _text(v: Any) -> str:
    if isinstance(v, list):
        return "+".join(map(str, v))
    return "–" if v is None else str(v)


def load_run(path: Path, command: str = "report") -> Run:
    """A run folder with metrics.json (i.e. scored); a clear error otherwise (one line naming
    the fix, the `memeval COMMAND` it came from in the example)."""
    path = Path(path)
    problem = folder_problem(path, command)
    if problem:
        raise ReportError(problem)
    for name in ("meta.json", "metrics.json", "predictions.jsonl"):
        if not artifact(path / name).exists():
            raise ReportError(f"{path} is not a scored run folder (no {name}); run it to the score stage "
                              f"or `memeval rescore {path}`")
    folder = RunFolder(path)
    usage = folder.read_json("usage.json") if (path / "usage.json").exists() else {}
    return Run(path, read_meta(path), read_metrics(folder), usage,
               folder.read_jsonl("predictions.jsonl"), folder.read_jsonl("judgments.jsonl"))


def load_runs(paths: list[Path], command: str = "report") -> list[Run]:
    runs = [load_run(p, command) for p in paths]
    seen: dict[str, int] = {}
    for r in runs:
        seen[f"{r.dataset}/{r.method}"] = seen.get(f"{r.dataset}/{r.method}", 0) + 1
    for r in runs:  # two runs of one method in one table: tell them apart by their folder name
        r.label = r.path.name if seen[f"{r.dataset}/{r.method}"] > 1 else r.method
    return runs


def incomparable(run: Run, reference: Run) -> list[str]:
    """Why `run` cannot be compared question by question with `reference` (empty: it can)."""
    reasons = [f"{r.path.name} is {r.completeness.describe()}; {FINISH_SHORT}"
               for r in (run, reference) if r.completeness.partial]
    if run.question_ids != reference.question_ids:
        only_a = sorted(run.question_ids - reference.question_ids)
        only_b = sorted(reference.question_ids - run.question_ids)
        reasons.append(f"question sets differ ({len(only_a)} only in {run.path.name}: {only_a[:3]}; "
                       f"{len(only_b)} only in the reference: {only_b[:3]})")
    a, b = run.provenance(), reference.provenance()
    for key, what in (("judge_model", "judge"), ("data_version", "data version"),
                      ("policy", "scoring policy"), ("credit", "credit")):
        if a[key] != b[key]:
            reasons.append(f"{what} differs ({a[key]} vs {b[key]})")
    return reasons
