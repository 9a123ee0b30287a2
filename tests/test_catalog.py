"""`memeval ls` and `memeval info`: what a run can be composed of, read from conf/ and the classes."""

from __future__ import annotations

from pathlib import Path

import pytest

from memeval.cli.catalog import info_main, ls_main

ROOT = Path(__file__).resolve().parents[1]


def test_ls_lists_every_method_config_with_what_its_class_is(capsys: pytest.CaptureFixture[str]) -> None:
    assert ls_main(["methods"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [line.split()[0] for line in lines]
    assert names == sorted(p.stem for p in (ROOT / "conf" / "method").glob("*.yaml"))
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
