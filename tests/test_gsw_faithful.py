"""GSW details that keep it faithful to the paper and robust with a real model (issue 11):
forward-falling and predictive questions, "no answer" words, odd question words, abbreviations
in sentence splitting, the output guard, and linear fact assembly. No server, no model: fast."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_gsw_reconciler import FakeLLM, chunk, run

from memeval.methods.gsw.method import _count
from memeval.methods.gsw.operator import make_chunks, split_sentences
from memeval.methods.gsw.qa import entries_from
from memeval.methods.gsw.reconciler import Reconciler, chunk_workspace
from memeval.methods.gsw.schemas import OperatorOutput, SpaceTimeOutput
from memeval.methods.gsw.workspace import ChunkRecord, Workspace, is_unanswered, verb_line

ROOT = Path(__file__).resolve().parents[1]


def test_forward_falling_question_answered_from_the_reconciled_workspace() -> None:
    """Ben waited somewhere unnamed, next to Ava. A later chunk names Ava's place without
    mentioning Ben: the value reaches Ben through the node, his open question is offered, and
    the prompt carries what the workspace holds about him, not only the new chunk's text."""
    prompts: list[str] = []

    def reply(kind: str, user: str) -> dict:
        prompts.append(user)
        known = user.split("What the workspace holds:", 1)[1].split("Open questions:", 1)[0]
        answer = "North Pier" if "Ben Cole: roles: guest; place now: North Pier" in known else ""
        return {"answers": [{"id": "1", "answer": answer, "entity_names": [answer] if answer else []}]}

    ws = Workspace(scope="1")
    rec = Reconciler(ws, llm=FakeLLM(reply))
    waited = {"phrase": "waited", "questions": [
        {"kind": "who", "question": "Who waited?", "answer_entity_ids": ["e2"]},
        {"kind": "where", "question": "Where did Ben Cole wait?"}]}
    run(rec.add(chunk("1.0", [("e1", "Ava Stone", "host", []), ("e2", "Ben Cole", "guest", [])], verbs=[waited],
                      links=[{"kind": "space", "value": None, "entity_ids": ["e1", "e2"]}])))
    run(rec.add(chunk("1.1", [("e1", "Ava Stone", "host", []), ("e2", "North Pier", "place", [])],
                      links=[{"kind": "space", "value": "North Pier", "entity_ids": ["e1", "e2"]}],
                      text="Ava Stone walked to the North Pier.")))
    assert len(prompts) == 1 and "Ben" not in prompts[0].split("What the workspace holds:")[0]
    q = next(q for v in ws.verbs.values() for q in v.questions if q.kind == "where")
    assert q.answer_text == "North Pier" and q.answered_in == "1.1"


@pytest.mark.parametrize("text", ["None", "none.", "Not stated", "not mentioned in the passage", "Unknown",
                                  "N/A", "n/a", "", "  ", "?", "No information", "The passage does not say"])
def test_no_answer_words_are_unanswered(text: str) -> None:
    assert is_unanswered(text)


@pytest.mark.parametrize("text", ["North Pier", "no later than noon", "Nonesuch Hall", "Unknown Soldier Park", "Ben"])
def test_real_answers_are_answers(text: str) -> None:
    assert not is_unanswered(text)


def test_none_answers_stay_open_everywhere() -> None:
    """An Operator answer "None" and a forward-falling answer "not stated" leave the question
    open (it is offered again later, and counted open), instead of recording "None" as a fact."""
    calls: list[str] = []

    def reply(kind: str, user: str) -> dict:
        calls.append(user)
        return {"answers": [{"id": "1", "answer": "not stated", "entity_names": ["None"]}]}

    ws = Workspace(scope="1")
    rec = Reconciler(ws, llm=FakeLLM(reply))
    verb = {"phrase": "left", "questions": [{"kind": "who", "question": "Who left?", "answer_entity_ids": ["e1"]},
                                            {"kind": "when", "question": "When did Ava leave?", "answer_text": "None"}]}
    run(rec.add(chunk("1.0", [("e1", "Ava Stone", "host", [])], verbs=[verb])))
    q = next(q for v in ws.verbs.values() for q in v.questions if q.kind == "when")
    assert q.is_open() and q.answered_in is None
    run(rec.add(chunk("1.1", [("e1", "Ava Stone", "host", [])])))
    run(rec.add(chunk("1.2", [("e1", "Ava Stone", "host", [])])))
    assert len(calls) == 2 and q.is_open()  # offered again: "not stated" did not close it
    stats: dict = {}
    from collections import Counter
    c: Counter = Counter()
    _count(ws, c)
    stats.update(c)
    assert stats["ff_open"] == 1 and "None" not in verb_line(ws, next(iter(ws.verbs.values())))


def test_predictive_questions_are_kept_offered_and_answered() -> None:
    def reply(kind: str, user: str) -> dict:
        assert "When will the regatta at Bryn Cove be held?" in user
        return {"answers": [{"id": "1", "answer": "May 9, 2031", "entity_names": ["May 9, 2031"]}]}

    ws = Workspace(scope="1")
    rec = Reconciler(ws, llm=FakeLLM(reply))
    run(rec.add(chunk("0.0", [("e1", "Olek Brandt", "clerk", [])])))  # workspace ids now differ from chunk ids
    rec_ = ChunkRecord(id="1.0", chapter="1", index=0, text="Ida Wren postponed the regatta at Bryn Cove.")
    op = OperatorOutput.model_validate({
        "entities": [{"id": "e1", "name": "Ida Wren"}, {"id": "e2", "name": "regatta at Bryn Cove"}],
        "verb_phrases": [{"phrase": "postponed the regatta", "questions": [
            {"kind": "who", "question": "Who postponed it?", "answer_entity_ids": ["e1"]}]}],
        "forward_questions": [{"question": "When will the regatta at Bryn Cove be held?", "entity_ids": ["e2"]}]})
    run(rec.add(chunk_workspace(rec_, op, None)))
    pred = [q for v in ws.verbs.values() for q in v.questions if q.kind == "predictive"]
    assert len(pred) == 1 and pred[0].is_open()
    assert pred[0].about_ids == [ws.find("regatta at Bryn Cove").id]
    run(rec.add(chunk("1.1", [("e1", "regatta at Bryn Cove", "event", []), ("e2", "May 9, 2031", "date", [])],
                      text="The regatta at Bryn Cove will be held on May 9, 2031.")))
    assert pred[0].answer_text == "May 9, 2031" and pred[0].answered_in == "1.1"
    v = next(v for v in ws.verbs.values() if v.predictive())
    assert verb_line(ws, v).startswith("expects: When will the regatta")


@pytest.mark.parametrize("word,kind", [("Whose", "who"), ("with whom?", "whom"), ("WHERE", "where"),
                                       ("how many", "how"), ("purpose", "other"), ("", "other")])
def test_unknown_question_word_does_not_fail_the_chunk(word: str, kind: str) -> None:
    op = OperatorOutput.model_validate({"entities": [{"id": "e1", "name": "Ida Wren"}], "verb_phrases": [
        {"phrase": "sailed", "questions": [{"kind": word, "question": "Q?", "answer_entity_ids": ["e1"]}]}]})
    assert op.verb_phrases[0].questions[0].kind == kind


def test_sentence_splitting_keeps_abbreviations() -> None:
    text = ("Mr. Ida Wren met Dr. Olek Brandt at St. Aldric's Chapel at 9 a.m. on Jan. 3. They talked. "
            "\"Wait!\" said Ms. Pell.\n\nA new paragraph starts here. It ends here.")
    assert split_sentences(text) == [
        "Mr. Ida Wren met Dr. Olek Brandt at St. Aldric's Chapel at 9 a.m. on Jan. 3.", "They talked.",
        "\"Wait!\" said Ms. Pell.", "A new paragraph starts here.", "It ends here."]
    assert make_chunks(text, 3)[0].startswith("Mr. Ida Wren met Dr. Olek Brandt at St. Aldric's Chapel")


def test_guard_drops_invented_entities_and_copied_examples_and_counts_them() -> None:
    """A drifting model copies the prompt's example values and invents entities; the guard
    drops them and the counts reach the per-chapter index summary. Values the chunk really
    contains are kept even when they equal an example."""
    text = "Ida Wren steered the ferry into Bryn Cove. The dock was crowded and Ida Wren was seasick."
    op = OperatorOutput.model_validate({"entities": [
        {"id": "e1", "name": "Ida Wren", "roles": [
            {"role": "workshop instructor", "states": ["nervous"]},  # old prompt's examples
            {"role": "skipper", "states": ["seasick", "sold out"]}]},  # new examples; "seasick" is in the text
        {"id": "e2", "name": "Bryn Cove", "roles": [{"role": "harbour", "states": ["crowded"]}]},
        {"id": "e3", "name": "Bethpage Black Course", "roles": [{"role": "venue of the festival"}]},
        {"id": "e4", "name": "Marrowgate Ferry Landing"},
        {"id": "e5", "name": "The committee voted to cancel"}],
        "verb_phrases": [{"phrase": "demonstrated cat leaps", "questions": []},
                         {"phrase": "steered the ferry", "questions": [
                             {"kind": "who", "question": "Who steered?", "answer_entity_ids": ["e1", "e3"]}]}]})
    st = SpaceTimeOutput.model_validate({"links": [
        {"kind": "space", "value": "Bryn Cove", "entity_ids": ["e1", "e2"]},
        {"kind": "time", "value": "April 4, 2031", "entity_ids": ["e1"]}]})
    rec = ChunkRecord(id="4.0", chapter="4", index=0, text=text)
    cw = chunk_workspace(rec, op, st)
    names = sorted(e.name for e in cw.entities.values())
    assert names == ["Bryn Cove", "Ida Wren"]
    ida = next(e for e in cw.entities.values() if e.name == "Ida Wren")
    assert [(r.role, r.states) for r in ida.roles] == [("skipper", ["seasick"])]
    bryn = next(e for e in cw.entities.values() if e.name == "Bryn Cove")
    assert bryn.roles[0].states == ["crowded"]  # in the text: kept although an old example
    assert [v.phrase for v in cw.verbs.values()] == ["steered the ferry"]
    assert next(iter(cw.verbs.values())).questions[0].answer_ids == [ida.id]
    time_nodes = [n for n in cw.nodes.values() if n.kind == "time"]
    assert time_nodes and not time_nodes[0].history  # copied date dropped, the link kept
    assert rec.guard == {"entities_dropped": 3, "roles_dropped": 1, "states_dropped": 1, "actions_dropped": 1,
                         "replies_copying_examples": 1, "link_values_dropped": 1}
    assert rec.operator is not None and len(rec.operator["entities"]) == 5  # the raw reply is kept for audits
    ws = Workspace(scope="4")
    run(Reconciler(ws, forward_falling=False).add(cw))
    from collections import Counter
    stats: Counter = Counter()
    _count(ws, stats)
    assert stats["guard_entities_dropped"] == 3 and stats["guard_by_chapter"]["4"]["roles_dropped"] == 1


def test_prompts_hold_no_benchmark_text() -> None:
    """Regression: the first prompts used the 20-chapter EpBench book's own words as examples."""
    from memeval.methods.gsw import prompts

    known = ["Bethpage Black Course", "demonstrated cat leaps", "workshop instructor", "venue of the festival",
             "nervous", "crowded", "date of the gala", "Ezra Edwards", "Carter Stewart", "March 23, 2024"]
    texts = [v for k, v in vars(prompts).items() if k.isupper() and isinstance(v, str)]
    texts += [m["content"] for fn in (lambda: prompts.operator_messages("x", "y"),
                                      lambda: prompts.spacetime_messages("x", []), lambda: prompts.ner_messages("q"))
              for m in fn()[:-1]]
    assert len(texts) >= 8
    for t in texts:
        for k in known:
            assert k.lower() not in t.lower(), k
    # and the examples the prompts show are in no EpBench book
    books = sorted((ROOT / "data" / "epbench").rglob("*.json*"))
    if not books:
        pytest.skip("no EpBench data")
    from memeval.methods.gsw.guard import NEW_EXAMPLES
    for book in books:
        body = book.read_text(encoding="utf-8", errors="ignore").lower()
        for ex in NEW_EXAMPLES:
            assert ex.lower() not in body, (ex, book.name)


def test_worked_example_is_its_own_exchange_and_the_real_input_comes_last() -> None:
    """The example sits in a user/assistant exchange of its own (not in the instructions, whose
    inline examples the 0.5B model copied into 14 of 15 replies), and the real passage is the last
    user message, so the prefix before it is identical across calls of one kind."""
    from memeval.methods.gsw import prompts
    from memeval.methods.gsw.schemas import OperatorOutput, QuestionEntities, SpaceTimeOutput

    op = prompts.operator_messages("Ida Wren sailed.", "Background.")
    st = prompts.spacetime_messages("Ida Wren sailed.", [("e1", "Ida Wren")])
    ner = prompts.ner_messages("Where did Ida Wren sail?")
    for msgs, schema in ((op, OperatorOutput), (st, SpaceTimeOutput), (ner, QuestionEntities)):
        assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
        schema.model_validate(json.loads(msgs[2]["content"]))  # the example reply fits the schema
        assert "Ida Wren" in msgs[-1]["content"] and "Ida Wren" not in msgs[1]["content"]
        for value in (*prompts.EXAMPLE_ROLES, *prompts.EXAMPLE_ACTIONS, *prompts.EXAMPLE_PLACES):
            assert value not in msgs[0]["content"], value  # no example value in the instructions
    assert op[:3] == prompts.operator_messages("Another passage.")[:3]


def test_operator_prompt_carries_the_papers_substance() -> None:
    from memeval.methods.gsw.operator import StageSettings
    from memeval.methods.gsw.prompts import OPERATOR, operator_messages

    for needle in ("implicit actions", "who, whom", "where, when, why and how", "Background", "What may come next"):
        assert needle.lower() in (OPERATOR + operator_messages("p", "Background text")[-1]["content"]).lower(), needle
    assert StageSettings().situating_context is True  # background context on by default
    import yaml
    cfg = yaml.safe_load((ROOT / "conf" / "method" / "gsw.yaml").read_text())
    assert cfg["situating_context"] is True and cfg["max_entries"] == 17


def _global_ws(n_chapters: int, per_chapter: int = 6) -> Workspace:
    """One book-wide workspace: recurring people on one ever-growing place node."""
    ws = Workspace(scope="global")
    rec = Reconciler(ws, forward_falling=False)
    for ch in range(n_chapters):
        for i in range(per_chapter):
            k = ch * per_chapter + i
            ents = [("e1", f"Person{k % 12} Smith", "visitor", ["busy"]), ("e2", f"Guest{k} Jones", "guest", [])]
            verbs = [{"phrase": f"met guest {k}", "questions": [
                {"kind": "who", "question": "Who met?", "answer_entity_ids": ["e1", "e2"]}]}]
            links = [{"kind": "space", "value": f"Place{k % 7}", "entity_ids": ["e1", "e2"]}]
            run(rec.add(chunk(f"{ch}.{i}", ents, verbs, links)))
    return ws


def _calls(fn) -> int:  # noqa: ANN001
    calls = 0

    def profile(frame, event, arg):  # noqa: ANN001, ANN202
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls


def test_entity_facts_of_a_global_workspace_are_linear() -> None:
    """Facts of every (chapter, entity) entry: 4x the chapters costs about 4x the work (counted
    in Python calls, not timed). Recurring entities have a history across the whole book, so a
    per-entry scan of that history grows faster (quadratic in the limit)."""
    small, big = _global_ws(10), _global_ws(40)
    positions = {str(i): i for i in range(40)}
    w_small = _calls(lambda: entries_from(small, positions))
    w_big = _calls(lambda: entries_from(big, positions))
    assert len(entries_from(big, positions)) > 3.5 * len(entries_from(small, positions))
    assert w_big / w_small < 5, (w_small, w_big)  # the per-entry scan it replaces measured about 6.8


def test_audit_script_measures_copied_examples_drops_and_open_questions(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    import json

    from memeval.methods.gsw.audits.operator_faithful import main

    ws = Workspace(scope="1", chapters=["1"])
    rec = Reconciler(ws, forward_falling=False)
    copying = OperatorOutput.model_validate({"entities": [
        {"id": "e1", "name": "Ida Wren", "roles": [{"role": "workshop instructor", "states": ["nervous"]}]},
        {"id": "e2", "name": "Bethpage Black Course"}],
        "verb_phrases": [{"phrase": "sailed", "questions": [
            {"kind": "who", "question": "Who sailed?", "answer_entity_ids": ["e1"]},
            {"kind": "where", "question": "Where?", "answer_text": "not stated"}]}]})
    clean = OperatorOutput.model_validate({"entities": [{"id": "e1", "name": "Ida Wren", "roles": [{"role": "skipper"}]}]})
    for i, (op, text) in enumerate([(copying, "Ida Wren sailed."), (clean, "Ida Wren rested.")]):
        run(rec.add(chunk_workspace(ChunkRecord(id=f"1.{i}", chapter="1", index=i, text=text), op, None)))
    folder = tmp_path / "gsw-x" / "book"
    (folder / "chapters").mkdir(parents=True)
    (folder / "chapters" / "1.json").write_text(json.dumps(ws.to_json()))
    assert main([str(tmp_path / "gsw-x"), "--json"]) == 0
    total = json.loads(capsys.readouterr().out)[0]["total"]
    assert total["replies"] == 2 and total["replies_copying_old_examples"] == 1
    assert total.get("replies_copying_new_examples", 0) == 0
    assert total["entities_dropped"] == 1 and total["roles_dropped"] == 1 and total["ff_open"] == 1
    assert main([str(folder)]) == 0 and "copying the old (benchmark) examples: 1/2 (50%)" in capsys.readouterr().out
