"""What the core reads from the plugins instead of naming them: a loader's data files and named
subsets, a protocol's display phrases, an experiment's summary. Each test installs a stand-in
plugin beside the built-in ones and checks that the shared code picks it up from the registry."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memeval import plugins
from memeval.datasets import integrity, subset
from memeval.datasets.integrity import DataFile
from memeval.datasets.types import Question
from memeval.evaluation import phrases
from memeval.evaluation.judge_matrix.criteria import CRITERIA
from memeval.evaluation.judge_matrix.render import scope_note
from memeval.evaluation.protocol import Protocol, experiment_line, experiment_summary
from memeval.model_access.errors import ConfigError


@dataclass(frozen=True)
class _Stub:
    """A registry entry whose class is already in hand."""

    cls: type

    def load(self) -> type:
        return self.cls


def _with(monkeypatch: pytest.MonkeyPatch, kind: str, name: str, cls: type) -> None:
    real = plugins.registered

    def registered(k: str) -> dict[str, Any]:
        found: dict[str, Any] = dict(real(k))
        if k == kind:
            found[name] = _Stub(cls)
        return dict(sorted(found.items()))

    monkeypatch.setattr(plugins, "registered", registered)


class _Loader:
    data_files = (DataFile("tidepool/logs.json", "0" * 64, "original"),)
    named_subsets = {"odd_ones": ("the questions whose id ends in an odd digit",
                                  lambda q: q.id[-1] in "13579")}


def test_a_loaders_data_files_join_the_manifest_and_its_own_list_checks_them(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _with(monkeypatch, "dataset", "tidepool", _Loader)
    assert integrity.manifests()["tidepool"] == _Loader.data_files
    assert "tidepool/logs.json" in integrity.manifest() and len(integrity.manifest()) > 1
    (tmp_path / "tidepool").mkdir()
    (tmp_path / "tidepool" / "logs.json").write_text("[]")
    with pytest.raises(ConfigError, match="Checksum mismatch"):  # through the registry
        integrity.verify(tmp_path, "tidepool/logs.json")
    with pytest.raises(ConfigError, match="Checksum mismatch"):  # through the loader's own list
        integrity.verify(tmp_path, "tidepool/logs.json", _Loader.data_files)
    # a file its loader does not list is not checked against another loader's hash
    assert integrity.verify(tmp_path, "tidepool/logs.json", ()).status == "unverified"


def test_a_named_subset_comes_from_the_loader_that_declares_it(monkeypatch: pytest.MonkeyPatch) -> None:
    _with(monkeypatch, "dataset", "tidepool", _Loader)
    qs = [Question(id=f"q{i}", corpus_id="c", text="?", gold=("x",)) for i in range(5)]
    assert [q.id for q in subset.named_subset(qs, "odd_ones")] == ["q1", "q3"]
    with pytest.raises(ValueError, match="known: .*odd_ones"):
        subset.named_subset(qs, "even_ones")


class _TideProtocol(Protocol):
    name = "tidepool"
    title = "Tidepool"
    agreement_check = "the tide table"
    matrix_score = "tide F1"
    model_free_check = "the tide table's lookup"
    per_type_manner = "Tidepool's own rules"


def test_a_protocols_phrases_reach_the_shared_sentences(monkeypatch: pytest.MonkeyPatch) -> None:
    before_scope, before_model_free = scope_note({}), CRITERIA["model_free"]
    _with(monkeypatch, "protocol", "tidepool", _TideProtocol)
    assert ("Tidepool", "the tide table") in phrases.declared("agreement_check")
    assert scope_note({}) == before_scope[:-1] + "; Tidepool: tide F1)"
    assert CRITERIA["model_free"] == before_model_free + ", the tide table's lookup"
    assert CRITERIA["per_type"].endswith(" and Tidepool's own rules")
    assert phrases.protocol_of({"protocol": {"protocol": "tidepool"}}) is _TideProtocol
    assert phrases.protocol_of({"protocol": {"protocol": "nowhere"}}) is None


def test_an_experiment_summary_is_its_configs_header_line(tmp_path: Path) -> None:
    (tmp_path / "ebb.yaml").write_text("# @package _global_\n# summary: every method at low tide\n"
                                       "# summary: a later line is not read\nexperiment:\n  name: ebb\n")
    (tmp_path / "flow.yaml").write_text("experiment:\n  name: flow\n# summary: below the header\n")
    assert experiment_summary("ebb", tmp_path) == "every method at low tide"
    assert experiment_summary("flow", tmp_path) is None
    assert experiment_summary("../ebb", tmp_path) is None
    assert experiment_line({"experiment": {"name": "no_such_experiment"}}).startswith(
        "experiment: **no_such_experiment** (settings of its own)")
    # the shipped experiments each state one
    shipped = sorted(p.stem for p in (Path(__file__).resolve().parents[1] / "conf" / "experiment").glob("*.yaml"))
    assert shipped and all(experiment_summary(name) for name in shipped)
