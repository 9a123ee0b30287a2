"""What a benchmark's scoring protocol provides to the harness.

A protocol owns everything dataset-specific after retrieval: how the shared answering model is
prompted (e.g. LongMemEval passes the question date), how one answer is judged, how judgments
become metrics, and how metrics become a table. Methods never see any of it.
"""

from __future__ import annotations

import functools
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from memeval.datasets.types import Dataset, Question
from memeval.model_access.chat import ChatModel
from memeval.paths import CONF
from memeval.settings_history import Introduced

from .presentation import Presentation


@dataclass(frozen=True)
class Resampling:
    """What a run's bootstrap resamples: its questions, or clusters of questions that are not
    independent (LoCoMo's conversations); `note` says what the intervals cannot show."""

    unit: str  # "question", or the cluster's name ("conversation")
    n_units: int
    clusters: dict[str, str] | None = None  # question id -> its cluster; None: questions resampled
    note: str | None = None

    def labels(self, question_ids: list[str]) -> list[str] | None:
        """The cluster of each question, for stats.bootstrap_std (None: over questions)."""
        return None if self.clusters is None else [self.clusters[q] for q in question_ids]


class Protocol(ABC):
    """Base for EpBench, LoCoMo, LongMemEval and custom-dataset scoring."""

    name: str = "protocol"
    version: str = "1"
    # The answer prompt's own example values: an answer stating one its context does not hold was
    # copied from the prompt (`memeval health`); tests/test_health.py checks each is in the prompt.
    answer_prompt_examples: tuple[str, ...] = ()
    # Whether gold answers are spans of the source text (EpBench's names, places and dates), so
    # that a context can be checked for them; LoCoMo's and LongMemEval's free-text answers are not.
    gold_strings_in_text: bool = False
    # The grounding version a new run is scored under, where the protocol has versions: a run
    # scored under an older one is flagged by `memeval health` (judge_grounding), since each
    # version closed a way a local judge inflated credit. None: the protocol has no versions.
    current_grounding: int | None = None
    # The scoring rules one set of judgments is scored under side by side (EpBench's lenient and
    # harsh): the score stage writes each rule's overall (metrics.json `by_policy`), and the
    # report's paired tables repeat under each, saying where a difference's sign or star changes.
    # Empty: the protocol has one rule.
    side_by_side_policies: tuple[str, ...] = ()
    # The settings the protocol gained after runs were saved without them (dataset.protocol keys;
    # memeval/settings_history.py): what their absence meant, filled into an older saved config.
    settings_history: ClassVar[tuple[Introduced, ...]] = ()
    # Where this class lived before, oldest first, in the form saved configs name it (before the
    # memeval namespace): a saved `_target_` of one maps to this class, and run identities hash
    # the first (the upgrade layer; read from the class itself, never inherited).
    former_paths: ClassVar[tuple[str, ...]] = ()
    # The family's adapters for the dataset-wide commands (evaluation/adapters.py), as `module:attr`
    # strings loaded when a command asks: its judge-check label set, its judge-matrix adapter.
    label_set: str | None = None
    judge_matrix_family: str | None = None
    # How the report, the judge matrix and a bundle's README word this benchmark (evaluation/
    # phrases.py collects them through the registry, so the shared code names no benchmark):
    # its name in prose (None: `name`); the questions its headline counts where not all
    # (`headline_phrase`, and as the judge matrix says it); the model-free check judge
    # agreement compares with; the judge matrix's model-free score and per-type rules, where they
    # come from this benchmark; the efficiency table's title; P / R convention notes by case.
    title: ClassVar[str | None] = None
    headline_phrase: ClassVar[str | None] = None
    matrix_headline: ClassVar[str | None] = None
    agreement_check: ClassVar[str | None] = None
    matrix_score: ClassVar[str | None] = None
    model_free_check: ClassVar[str | None] = None
    per_type_manner: ClassVar[str | None] = None
    efficiency_title: ClassVar[str] = "Efficiency and cost"
    pr_convention_notes: ClassVar[dict[str, str]] = {}

    @classmethod
    def upgrade_description(cls, desc: dict[str, Any], run_format: int) -> dict[str, Any]:
        """An older run's protocol description (meta.json, metrics.json provenance) as today's
        `describe()` writes it: the keys a description of this artifacts `run_format` (meta.json)
        left out, at the value their absence meant. Called for every format, this one's too (a
        key added after the last format change is missing from any format). Returns a new dict."""
        return dict(desc)

    @classmethod
    def answer_examples(cls, settings: dict[str, Any]) -> tuple[str, ...]:
        """The example values of the answer prompt a run configured with `settings` (its
        dataset.protocol node) was sent; a protocol with one prompt version: its declared ones."""
        return cls.answer_prompt_examples

    @staticmethod
    def judge_called(line: dict[str, Any]) -> bool:
        """Whether a judgments line's verdict came from the judge model (not a model-free rule),
        so that it counts in the judge's agreement with the grounding check."""
        return True

    @abstractmethod
    def answer_messages(self, question: Question, context_text: str) -> list[dict[str, str]]:
        """Messages for the shared answering model: instructions, the method's context, question."""

    @abstractmethod
    async def judge(self, question: Question, prediction: dict[str, Any], dataset: Dataset,
                    judge: ChatModel) -> dict[str, Any]:
        """One judgments.jsonl line for this prediction (must carry question_id)."""

    @abstractmethod
    def metrics(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]]) -> dict[str, Any]:
        """metrics.json content, computed from artifacts alone (no model call)."""

    @abstractmethod
    def table(self, metrics: dict[str, Any], meta: dict[str, Any]) -> str:
        """A Markdown table whose header names model, judge, policy and data version."""

    @abstractmethod
    def presentation(self) -> Presentation:
        """How the results are shown (headline, groups, report tables): written into metrics.json,
        read by the report, compare and tracking, which keep no per-family table of their own."""

    def question_scores(self, judgments: list[dict[str, Any]],
                        predictions: list[dict[str, Any]]) -> dict[str, float]:
        """Per-question headline score, for paired comparisons between runs: the judgments key
        the presentation names (`question_score`); a protocol that computes it overrides this."""
        key = self.presentation().question_score
        if key is None:
            raise NotImplementedError(f"{type(self).__name__} declares no question_score key: "
                                      "override question_scores")
        return {j["question_id"]: float(j[key]) for j in judgments if isinstance(j.get(key), int | float)}

    def headline_scores(self, judgments: list[dict[str, Any]], predictions: list[dict[str, Any]],
                        policy: str | None = None) -> dict[str, float]:
        """Per question, the values whose mean is the headline overall (under `policy`, else the
        protocol's own): what the gold-audit split and a subset's weighted overall average. The
        default is `question_scores`; a protocol whose overall leaves questions out, or whose
        policy changes a question's score, overrides it (NotImplementedError: not for a policy)."""
        if policy is not None:
            raise NotImplementedError(f"{type(self).__name__} gives no per-question headline under policy {policy!r}")
        return self.question_scores(judgments, predictions)

    def policy_overalls(self, judgments: list[dict[str, Any]],
                        predictions: list[dict[str, Any]]) -> dict[str, Any] | None:
        """{rule: the overall under it} for every rule of `side_by_side_policies` (metrics.json
        `by_policy`, a statistics block, so an older run's upgraded reading has it too); None:
        the protocol has one rule, or nothing here that the rules score differently."""
        return None

    def headline_questions(self, predictions: list[dict[str, Any]]) -> set[str]:
        """The questions the headline overall counts (what a re-judging of the answers, such as the
        judge matrix, should average): all of them, unless the protocol's overall leaves some out."""
        return {p["question_id"] for p in predictions}

    def resampling(self, predictions: list[dict[str, Any]]) -> Resampling:
        """What the bootstrap resamples (written as metrics.json `statistics`): questions, by default."""
        return Resampling("question", len({p["question_id"] for p in predictions}))

    def group_caveats(self, metrics: dict[str, Any]) -> dict[str, str]:
        """{group (or "overall"): what its headline cell measures where that is not the
        headline's label}: tables and figures name it there. Default: none."""
        return {}

    def shown_metrics(self, metrics: dict[str, Any], judgments: list[dict[str, Any]],
                      predictions: list[dict[str, Any]]) -> dict[str, Any]:
        """metrics.json as the report shows it: the saved numbers, except a statistic the
        protocol corrects at display time (each override says which and why). Never written
        back: saved runs replay byte for byte. Default: the saved metrics."""
        return metrics

    def describe(self) -> dict[str, Any]:
        return {"protocol": self.name, "version": self.version}


SUMMARY = "# summary: "  # the header line of conf/experiment/NAME.yaml that says what it compares


@functools.cache
def experiment_summary(name: str, folder: Path = CONF / "experiment") -> str | None:
    """What an experiment compares, in one phrase, as its config's header states it (a
    `# summary: ` comment line: a config key would enter every run's config); None for a name
    with no config or no summary."""
    path = folder / f"{name}.yaml"
    if not re.fullmatch(r"[\w-]+", name) or not path.is_file():
        return None
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        if line.startswith(SUMMARY):
            return line[len(SUMMARY):].strip()
    return None


NO_REFERENCE = "no reference: a fair comparison under shared constraints, reproducing no published experiment"


def experiment_line(meta: dict[str, Any]) -> str | None:
    """What the run compares under, its reference and where it departs from it (meta `experiment`),
    or that it has none; None for a run made before experiments were recorded (all of them fair)."""
    exp = meta.get("experiment")
    if not isinstance(exp, dict) or not exp.get("name"):
        return None
    name = str(exp["name"])
    line = f"experiment: **{name}** ({experiment_summary(name) or 'settings of its own'})"
    if "deviations" not in exp:
        return f"{line}; {NO_REFERENCE}"
    if exp.get("reference"):
        line += f"; reference: {exp['reference']}"
    devs = exp.get("deviations") or []
    line += ("; deviations from the reference: " + "; ".join(devs)) if devs else "; no deviation from the reference"
    if exp.get("silent"):
        line += "; the reference does not say: " + "; ".join(exp["silent"])
    return line


def index_model_line(meta: dict[str, Any]) -> str | None:
    """The indexing model, where it is not the answering model (meta `index_model`; a run made
    before it was recorded was indexed by its answering model)."""
    index = meta.get("index_model")
    if not index or index == meta.get("answer_model"):
        return None
    return f"indexing model: **{index}** (the method's index-time calls; the answering model answers)"


def cap_holds_corpus_text(meta: dict[str, Any]) -> str | None:
    """The warning a table carries when the cap holds some questions' whole corpus (meta.json
    `cap_holds_corpus`; None when no question's does, or the run did not record it)."""
    held = meta.get("cap_holds_corpus") or {}
    k, n = int(held.get("questions", 0)), int(held.get("of", 0))
    if not k:
        return None
    which = f"all {n} questions" if k == n else f"{k} of {n} questions"
    return (f"retrieval not tested for {which}: the context cap holds their whole corpus (every unit), so a "
            "method may hand the model everything; they measure what a method keeps and how the model answers")


def imported_line(imp: dict[str, Any]) -> str:
    """What an imported run's answers are (meta.json `imported`): made elsewhere, by whom, from where."""
    src = imp.get("source")
    where = src.get("url", "?") + (f"@{str(src['commit'])[:12]}" if src.get("commit") else "") \
        if isinstance(src, dict) else str(src)
    prompt = imp.get("answer_prompt")
    prompt = prompt.get("name") if isinstance(prompt, dict) else prompt
    line = (f"answers imported, not made here (no index built, no answer generated): {imp.get('system', '?')} "
            f"{imp.get('system_version') or ''}".rstrip()
            + f", answer prompt {prompt or 'not stated'}; from {where} (sha256 {str(imp.get('answers_sha256', '?'))[:12]}); "
            f"licence: {imp.get('licence', '?')}")
    judge = imp.get("judge")
    if isinstance(judge, dict) and judge.get("published_score"):
        line += f"; published score {judge['published_score']} ({judge.get('aggregate', '?')})"
    return line


_COUNTED = re.compile(r"^(?:all )?(\d+) of (\d+)(.*)$", re.S)


def questions_text(subset: str | None, n_questions: int | None = None) -> str:
    """How many of the dataset's questions a run answered, as "n of N questions (how chosen)":
    a subset is never silent. `subset` is meta.json's label ("8 of 105 (stratified by ...)", "all",
    "all 50 of 105; gold units within ..."); `n_questions` its count, which "all" needs."""
    label = str(subset or "all")
    if m := _COUNTED.match(label):
        return f"{m.group(1)} of {m.group(2)} questions{m.group(3)}"
    if label == "all" and n_questions:
        return f"{n_questions} of {n_questions} questions (all)"
    return f"questions: {label}"  # a label of another form (or a run that did not count): as written


def provenance_header(meta: dict[str, Any], policy: str) -> str:
    """The lines every results table starts with, so a number never travels without its setup."""
    answer = meta.get("answer_model", "?")
    judge = meta.get("judge_model", "?")
    lines = [
        f"- answering model: **{answer}**; judge: **{judge}**; scoring: **{policy}**",
        f"- data: {meta.get('data_version', '?')}; {questions_text(meta.get('subset'), meta.get('n_questions'))}; "
        f"context cap: {meta.get('context_cap', '?')}; tokenizer: o200k_base",
    ]
    if isinstance(meta.get("imported"), dict):  # its own answerer, prompt and retrieval: no experiment of ours
        lines.append(f"- {imported_line(meta['imported'])}")
    else:
        lines.extend(f"- {line}" for line in (experiment_line(meta), index_model_line(meta)) if line)
        if meta.get("answer_with", "shared") != "shared":
            lines.append(f"- answers: the method's own prompt (answer_with={meta['answer_with']}), not the shared "
                         "answer prompt; the answering model is still the one named above")
    if held := cap_holds_corpus_text(meta):
        lines.append(f"- {held}")
    if meta.get("cap_audit_text"):
        lines.append(f"- {meta['cap_audit_text']}")
    if "gpt-4o" not in str(answer).lower():
        lines.append("- NOTE: not GPT-4o answering; these numbers are not comparable to the "
                     "published GPT-4o figures")
    lines.extend(f"- data note: {n}" for n in meta.get("data_notes", []))
    return "\n".join(lines)


def fmt(x: float | None, digits: int = 3) -> str:
    """A metric for a table: undefined values (None or NaN) print as a dash."""
    if x is None or x != x:
        return "–"
    return f"{x:.{digits}f}"
