"""`memeval ls` and `memeval info`: what a run can be composed of, read from conf/ and the classes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memeval import plugins
from memeval.cli.catalog import info_main, ls_main

ROOT = Path(__file__).resolve().parents[1]


def test_ls_lists_every_method_config_with_what_its_class_is(capsys: pytest.CaptureFixture[str]) -> None:
    assert ls_main(["methods"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [line.split()[0] for line in lines]
    installed = {n for n, p in plugins.registered("method").items() if not p.builtin}  # e.g. the bm25 example's
    assert names == sorted({p.stem for p in (ROOT / "conf" / "method").glob("*.yaml")} | installed)
    graphiti = next(line for line in lines if line.startswith("graphiti "))
    assert "Graphiti" in graphiti  # the class's own first docstring line, not a hand-kept table
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines), "every method says what it is"


def test_info_gives_a_methods_parameters_and_refuses_a_typo(capsys: pytest.CaptureFixture[str]) -> None:
    assert info_main(["embedding_rag"]) == 0
    out = capsys.readouterr().out
    assert "conf/method/embedding_rag.yaml" in out and "top_k" in out.split("parameters: ")[1]
    assert "records: method_code" in out
    assert info_main(["embeding_rag"]) == 2
    assert "did you mean 'embedding_rag'?" in capsys.readouterr().err
    assert ls_main(["judgez"]) == 2
    assert "did you mean 'judges'?" in capsys.readouterr().err


class _Dist:
    def __init__(self, name: str) -> None:
        self.name = name


class _EntryPoint:
    def __init__(self, name: str, value: str, dist: str) -> None:
        self.name, self.value, self.dist = name, value, _Dist(dist)


@pytest.fixture()
def acme(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Another distribution's method and dataset (classes of memeval's own, under new names)."""
    real = plugins.entry_points
    fakes = {"memeval.methods": [_EntryPoint("acme_rag", "memeval.methods.embedding_rag:EmbeddingRAG", "acme-memory")],
             "memeval.datasets": [_EntryPoint("acme_notes", "memeval.datasets.custom:CustomLoader", "acme-data")]}
    monkeypatch.setattr(plugins, "entry_points", lambda group: [*real(group=group), *fakes.get(group, [])])
    plugins.refresh()
    yield
    monkeypatch.undo()
    plugins.refresh()


def test_ls_and_info_list_an_installed_plugin_with_its_package(acme: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert ls_main(["methods"]) == 0
    rag = next(line for line in capsys.readouterr().out.splitlines() if line.split()[0] == "acme_rag")
    assert rag.endswith("[from acme-memory]") and "Embedding RAG" in rag
    assert ls_main(["datasets"]) == 0
    notes = next(line for line in capsys.readouterr().out.splitlines() if line.split()[0] == "acme_notes")
    assert notes.endswith("[from acme-data]")
    assert ls_main(["methods"]) == 0 and "[from" not in next(  # memeval's own: no package named
        line for line in capsys.readouterr().out.splitlines() if line.startswith("embedding_rag "))
    assert info_main(["acme_rag"]) == 0
    out = capsys.readouterr().out
    assert "from the plugin package acme-memory" in out and "memeval.methods: acme_rag = " in out
    assert "_target_: memeval.methods.embedding_rag.EmbeddingRAG" in out and "name: acme_rag" in out
    assert "paragraphs_per_unit_cap: 4" in out  # its constructor's default, with no config file
    assert "top_k" in out.split("parameters: ")[1]
    assert info_main(["acme_rg"]) == 2
    assert "did you mean 'acme_rag'?" in capsys.readouterr().err
