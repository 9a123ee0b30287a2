"""One run's health: the four scopes' checks on one run folder, as a Health (health.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hydra.utils import get_class
from omegaconf import OmegaConf

from ..protocol import Protocol
from ..runs.folder import RunFolder
from ..runs.health_file import Health
from ..runs.scoring import read_metrics
from ..runs.upgrade import read_config, saved_dataset
from .answer import answer_checks
from .complete import complete_check
from .context import context_checks
from .dates import day_key
from .example_phrases import example_phrase_checks
from .index import index_checks
from .judge import judge_checks
from .names import vocabulary
from .stored import index_claims
from .support import support_checks


def protocol_class(run: Path) -> type[Protocol]:
    """The run's protocol class (its declarations only: nothing is instantiated or loaded)."""
    return get_class(str(read_config(run).dataset.protocol._target_))


def prompt_examples(run: Path) -> tuple[str, ...]:
    """The example values of the answer prompt the run was sent (its protocol settings, upgraded)."""
    settings = OmegaConf.to_container(read_config(run).dataset.protocol, resolve=True)
    return tuple(protocol_class(run).answer_examples({str(k): v for k, v in settings.items()} if isinstance(settings, dict) else {}))


def corpus_units(run: Path) -> dict[str, int]:
    """Units per corpus as the index stage recorded them (index.json), for the whole-corpus test."""
    path = run / "index.json"
    if not path.exists():
        return {}
    return {str(c["corpus_id"]): int(c.get("units") or 0) for c in json.loads(path.read_text()).get("corpora", [])}


def unit_dates(dataset: Any) -> dict[str, dict[str, str]] | None:
    """Corpus id -> unit id -> the unit's day, from the run's benchmark data (None when that data
    is not on this machine); units without a timestamp are left out."""
    if dataset is None:
        return None
    out: dict[str, dict[str, str]] = {}
    for cid, corpus in dataset.corpora.items():
        days = {str(u.id): d for u in corpus.units if (d := day_key(u.timestamp)) is not None}
        if days:
            out[str(cid)] = days
    return out


def corpus_vocabularies(dataset: Any) -> dict[str, frozenset[str]] | None:
    """Corpus id -> the stems of every word its units write (text, title, timestamp, and the id a
    context may head a unit with: LongMemEval's "answer_sharegpt_YkWn1Ne_0"), for the
    unsourced-names check (None when the run's benchmark data is not on this machine)."""
    if dataset is None:
        return None
    return {str(cid): vocabulary(t for u in corpus.units for t in (u.text, u.title or "", u.timestamp or "", u.id))
            for cid, corpus in dataset.corpora.items()}


def check_run(run: Path, thresholds: dict[str, Any], index: dict[str, Any] | None = None,
              markers: tuple[str, ...] = (), dataset: Any = None, labels: tuple[str, ...] = ()) -> Health:
    """Every check on a scored run folder. `index`, `markers` and `labels` come from the method
    (the layer above reads them: harness/health.py); thresholds as load_thresholds gives them. `dataset`: the
    run's benchmark data where the caller holds it (the score stage), else read from the saved
    loader. A run that only indexed (`stages=[index]`: no metrics.json, an index health probe)
    gets the index checks."""
    folder = RunFolder(run)
    if not (run / "metrics.json").exists():
        return Health(list(index_checks(index, thresholds["index"])))
    predictions = folder.read_jsonl("predictions.jsonl")
    judgments = folder.read_jsonl("judgments.jsonl")
    metrics = read_metrics(folder)
    proto = protocol_class(run)
    data = dataset if dataset is not None else saved_dataset(run, as_indexed=True)  # as the runner hands it
    checks = [*index_checks(index, thresholds["index"]),
              *context_checks(predictions, metrics, markers, proto.gold_strings_in_text, corpus_units(run),
                              thresholds["context"], unit_dates(data), corpus_vocabularies(data), labels),
              *support_checks(predictions, index_claims(index), data, labels, markers, thresholds),
              *example_phrase_checks(predictions, index, index_claims(index), data,
                                     {s: thresholds[s].get("prompt_example_phrases", {}) for s in ("context", "index")}),
              *answer_checks(predictions, prompt_examples(run), thresholds["answer"]),
              complete_check(run, predictions, judgments, thresholds["answer"]["complete"], data),
              *judge_checks(run, metrics, judgments, proto.judge_called, thresholds["judge"],
                           proto.current_grounding)]
    return Health(checks)
