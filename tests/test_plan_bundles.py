"""The v2 plan prices only what no bundle ships yet: a row counts as done when the bundle holds a
run of its method with the same answering, indexing and judging models and question count."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import plan_bundles_v2 as plan  # noqa: E402

ROLES = ["llm=local", "judge=local", "dataset=epbench20", "subset.n=200"]


def _bundle(tmp_path: Path, method: str, index_model: str, n: int = 200) -> Path:
    results = tmp_path / "results"
    run = f"runs/epbench20/{method}-0123456789"
    (results / "epbench20-local" / run).mkdir(parents=True)
    (results / "epbench20-local" / "manifest.json").write_text(json.dumps(
        {"runs": [{"path": run, "method": method, "dataset": "epbench20", "n_questions": n}]}))
    (results / "epbench20-local" / run / "meta.json").write_text(json.dumps({
        "method": method, "dataset": "epbench20", "n_questions": n,
        "answer_model": "qwen2.5-coder-1.5b-instruct", "index_model": index_model,
        "judge_model": "qwen2.5-coder-1.5b-instruct"}))
    return results


def test_a_bundled_run_with_the_rows_roles_is_done(tmp_path) -> None:
    results = _bundle(tmp_path, "mem0", "qwen2.5-coder-1.5b-instruct")
    cfg = plan.compose(["method=mem0", *ROLES, "llm_index=local"])
    assert plan.bundled_run("epbench20-local", "mem0", cfg, results) == "runs/epbench20/mem0-0123456789"


def test_another_indexer_question_count_method_or_missing_bundle_is_not_done(tmp_path) -> None:
    results = _bundle(tmp_path, "graphrag", "qwen2.5-coder-1.5b-instruct")
    small = plan.compose(["method=graphrag", *ROLES, "llm_index=local_small"])
    assert plan.bundled_run("epbench20-local", "graphrag", small, results) is None  # 0.5B row
    big = plan.compose(["method=graphrag", *ROLES, "llm_index=local"])
    assert plan.bundled_run("epbench20-local", "lightrag", big, results) is None
    fewer = _bundle(tmp_path / "b", "graphrag", "qwen2.5-coder-1.5b-instruct", n=40)
    assert plan.bundled_run("epbench20-local", "graphrag", big, fewer) is None
    assert plan.bundled_run("locomo-local", "graphrag", big, results) is None  # no such bundle yet


def test_a_top_up_is_done_only_when_the_bundle_holds_the_grown_run(tmp_path) -> None:
    """subset.extra grows a row's question count: the bundle's 200-question run no longer does."""
    cfg = plan.compose(["method=mem0", *ROLES, "subset.extra={1:40}", "llm_index=local"])
    assert plan.bundled_run("epbench20-local", "mem0", cfg, _bundle(tmp_path, "mem0", "qwen2.5-coder-1.5b-instruct")) is None
    grown = _bundle(tmp_path / "b", "mem0", "qwen2.5-coder-1.5b-instruct", n=240)
    assert plan.bundled_run("epbench20-local", "mem0", cfg, grown) == "runs/epbench20/mem0-0123456789"


def test_serving_overrides_reach_the_command_and_leave_the_run_folder_alone(capsys) -> None:
    """LoCoMo's Vanilla runs on one server slot (four slots timed out prefilling the conversation
    four times at once): the queue's command carries it, and the run keeps its folder, so a run
    begun on four slots resumes in the same folder from the cache."""
    from memeval.evaluation.runs.folder import config_hash
    from memeval.harness.build import identity
    from memeval.harness.estimate import compose

    assert plan.main(["--only", "locomo-local", "--commands"]) == 0
    lines = capsys.readouterr().out.splitlines()
    vanilla = next(ln for ln in lines if ln.startswith("python run.py method=vanilla "))
    assert "llm.max_concurrency=1" in vanilla.split()
    assert not any("max_concurrency" in ln for ln in lines if ln is not vanilla)
    row = next(r for r in plan.plan_rows("locomo-local") if r[1] == "vanilla")
    served, plain = compose(["method=vanilla", *row[3]]), compose(["method=vanilla", *row[3][:-1]])
    assert served.llm.server.n_parallel == 1 and plain.llm.server.n_parallel == 4
    assert config_hash(identity(served)) == config_hash(identity(plain))


def test_gsw_chunks_conversations_by_words_in_every_row_of_a_conversation_bundle() -> None:
    """GSW's 3-turn chunks of a conversation hold half the words of a prose chunk: the
    conversation bundles' GSW rows (its 0.5B alternative too) take chunk_min_words=50, EpBench's do not."""
    rows = [(b, label, o) for b, label, m, o in plan.plan_rows() if m == "gsw"]
    assert {b for b, _, _ in rows} == set(plan.BUNDLES) and all(len([r for r in rows if r[0] == b]) == 2
                                                                for b in plan.BUNDLES)
    for bundle, label, overrides in rows:
        assert ("method.chunk_min_words=50" in overrides) == (bundle != "epbench20-local"), (bundle, label)


def test_longmemeval_rows_start_one_server_per_local_model() -> None:
    """LongMemEval's answering model takes 2 x 32k slots; its judge and a 1.5B indexer take the
    same, so the run starts one 1.5B server, and the run folder is the one without them."""
    from memeval.evaluation.runs.folder import config_hash
    from memeval.harness.build import identity
    from memeval.harness.estimate import compose

    for _, label, method, overrides in plan.plan_rows("longmemeval-local"):
        cfg = compose([f"method={method}", *overrides])
        roles = [cfg.llm, cfg.judge] + ([cfg.llm_index] if "server" in cfg.llm_index else [])
        keys: dict[str, set] = {}
        for role in roles:
            s = role.server
            keys.setdefault(s.model, set()).add((s.n_parallel, s.ctx_size))
        assert keys["qwen2.5-coder-1.5b"] == {(2, 65536)}, (label, keys)
        plain = compose([f"method={method}", *[o for o in overrides
                                               if not o.startswith(("judge.", "llm_index.c", "llm_index.m"))]])
        assert config_hash(identity(cfg)) == config_hash(identity(plain)), label
    epbench = [o for _, _, _, o in plan.plan_rows("epbench20-local")]
    assert not any(x.startswith("judge.") for o in epbench for x in o)
