"""The unsourced-names check (evaluation/health/names.py): names a context holds that its corpus
never writes. Real-model cases come from the v1 bundles' stored runs (tests/fixtures/v1_bundles);
the rules are shown on invented text."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import v1_run

from memeval.datasets.types import Corpus, Unit
from memeval.evaluation.health.names import names, unsourced, unsourced_names_check, vocabulary
from memeval.evaluation.health.run import corpus_vocabularies
from memeval.evaluation.runs.health_file import Health, load_thresholds, read_health
from memeval.harness.health import run_health
from memeval.methods.external.lightrag import LightRAGMethod
from memeval.methods.gsw import prompts as gsw_prompts

LIMITS = load_thresholds()["context"]["unsourced_names"]
SOURCE = ("Maren: I finally opened the bakery on Quill Street! My TikTok about it got 300 views.\n"
          "Oskar: Congrats, Maren! Which shows did you bake for? I owns a van, I can deliver.\n"
          "Maren: \"Honestly\" the harvest fair. Shows are busy in October.")


def _pred(i: int, context: str, corpus: str = "c1", question: str = "Where is the bakery?") -> dict[str, Any]:
    return {"question_id": f"q{i}", "corpus_id": corpus, "question": question, "context_text": context}


def test_only_names_outside_a_sentences_first_word_are_read() -> None:
    text = 'Additionally, she met Dr Vell Arno. "Hello there," said Maren. - Tomorrow Quill Street opens'
    assert names(text) == ["Dr Vell Arno", "Maren", "Quill Street"]


def test_the_source_itself_and_its_paraphrases_are_sourced() -> None:
    vocab = vocabulary([SOURCE])
    assert unsourced(SOURCE, vocab) == set()
    # possessives, plurals, a derived word ("Owner" from "owns"), inner capitals, calendar names
    paraphrase = "The summary says Maren's Bakery Owner posted on TikTok about the Harvest Fair on Monday."
    assert unsourced(paraphrase, vocab) == set()


def test_an_invented_place_and_a_prompt_examples_name_are_flagged() -> None:
    vocab = vocabulary([SOURCE])
    context = "Maren runs the bakery in the city of Port Veltham, where Chair Ilsa Brandt visits Maren."
    assert unsourced(context, vocab) == {"Port Veltham", "Chair Ilsa Brandt"}
    # a word the question writes counts as sourced: the question may name what it asks about
    assert unsourced(context, vocab | vocabulary(["Is the bakery in Port Veltham?"])) == {"Chair Ilsa Brandt"}


def test_a_name_in_every_context_counts_in_every_context() -> None:
    # no frequency rule: GraphRAG's copied example reaches every context, and all of them count
    sources = {"c1": vocabulary([SOURCE])}
    preds = [_pred(i, f"Report {i}: Maren met Councillor Dova Renk at the bakery.") for i in range(20)]
    check = unsourced_names_check(preds, sources, (), (), LIMITS)
    assert check.status == "fail" and check.value == 1.0
    assert "'Councillor Dova Renk' (20)" in check.message


def test_each_question_keeps_its_names_through_health_json(tmp_path: Path) -> None:
    # the explorer's question page shows them (evaluation/explore/readers.py)
    sources = {"c1": vocabulary([SOURCE])}
    preds = [_pred(0, "Maren met Chair Ilsa Brandt in Port Veltham."), _pred(1, "Maren baked bread.")]
    check = unsourced_names_check(preds, sources, (), (), LIMITS)
    assert check.questions == {"q0": "Chair Ilsa Brandt, Port Veltham"}
    (tmp_path / "health.json").write_text(json.dumps(Health([check]).to_dict()))
    saved = json.loads((tmp_path / "health.json").read_text())
    assert saved["format"] == 3 and saved["checks"][0]["questions"] == check.questions
    assert read_health(tmp_path).checks[0].questions == check.questions
    ok = unsourced_names_check(preds[1:], sources, (), (), LIMITS)
    assert ok.value == 0.0 and "questions" not in Health([ok]).to_dict()["checks"][0]


def test_a_methods_declared_labels_are_its_frame_not_names() -> None:
    sources = {"c1": vocabulary([SOURCE])}
    context = ("\nKnowledge Graph Data (Entity):\n{\"entity\": \"Maren\"}\n\nDocument Chunks (each entry refers "
               "to the `Reference Document List`, e.g. `Section 1 → Subsection 1.2`):\nMaren opened the bakery.")
    without = unsourced_names_check([_pred(0, context)], sources, (), (), LIMITS)
    assert without.status == "fail" and "Reference Document List" in without.message
    with_labels = unsourced_names_check([_pred(0, context)], sources, LightRAGMethod.context_labels, (), LIMITS)
    assert with_labels.status == "ok" and with_labels.value == 0.0


def test_empty_and_marker_only_contexts_are_not_read_and_no_data_is_not_measured() -> None:
    marker = "Sorry, I'm not able to answer.[no-context]"
    sources = {"c1": vocabulary([SOURCE])}
    check = unsourced_names_check([_pred(0, marker), _pred(1, "Maren and Oskar.")], sources, (), (marker,), LIMITS)
    assert check.value == 0.0 and "0 of 1" in check.message
    none = unsourced_names_check([_pred(0, "Port Veltham")], None, (), (), LIMITS)
    assert none.status == "not_measured" and none.value is None and "not on this machine" in none.message


def test_unit_ids_and_titles_are_part_of_the_source() -> None:
    # LongMemEval's contexts head each session with its id ("answer_sharegpt_YkWn1Ne_0")
    corpus = Corpus("h1", (Unit("answer_x_QrTz9Lo_0", "we talked about bread", 0, "2023/05/21 (Sun) 10:20",
                                "Session Bread"),))
    sources = corpus_vocabularies(SimpleNamespace(corpora={"h1": corpus}))
    assert sources is not None
    context = "### Session answer_x_QrTz9Lo_0 (2023/05/21 (Sun) 10:20)\nuser: we talked about Bread"
    assert unsourced_names_check([_pred(0, context, corpus="h1")], sources, (), (), LIMITS).value == 0.0
    assert "QrTz" in unsourced(context, vocabulary(["we talked about bread", "2023/05/21 (Sun) 10:20"]))


@pytest.mark.parametrize(("method", "status", "name"), [
    ("graphrag", "fail", "Central Institution Chair Martin Smith"),  # the package prompt's example, every context
    ("gsw", "warn", "Skellwick Pier"),  # GSW's own operator example (methods/gsw/prompts.py)
    ("vanilla", "ok", None), ("embedding_rag", "ok", None), ("seem", "ok", None), ("hipporag2", "ok", None)])
def test_v1_locomo_runs_copied_example_names_and_the_source_reads_clean(method: str, status: str, name: str | None,
                                                                         data_dir: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMEVAL_DATA", str(data_dir))
    check = next(c for c in run_health(v1_run("locomo-local", method), load_thresholds()).checks
                 if c.name == "unsourced_names")
    assert check.status == status, check.message
    if name is None:
        assert check.value == 0.0  # contexts of source text (and SEEM's frames over it) name nothing new
    else:
        assert f"'{name}'" in check.message
    if method == "gsw":
        assert name in " ".join(str(v) for v in vars(gsw_prompts).values() if isinstance(v, str))
