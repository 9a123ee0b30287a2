"""Result bundles on scripted runs: export -> verify passes with no request to any server, and
verify fails on an edited metrics.json, a removed call (a cache miss that names the call and
reaches no server) and a changed byte; import loads the calls into an empty cache; the
baselines' proxy calls are recorded and refused like in-process ones."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, _data_dir, run_cli, scripted_overrides
from scripted_server import ScriptedServer

from memeval.cli.bundle.export import BundleError, export_bundle
from memeval.cli.bundle.rerun import rerun
from memeval.cli.bundle.verify import import_calls, verify_bundle
from memeval.harness.replay import Replay
from memeval.model_access.cache import ResponseCache
from memeval.model_access.cache_store import open_cache

RUNS = (["method=embedding_rag", "subset.n=4"], ["method=seem", "subset.n=2", "method.max_passages=4"])


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Iterator[tuple[ScriptedServer, Path, Path]]:
    """Two scripted runs (SEEM builds an LLM index), exported through the CLI; the server stays
    up, so any request a replay sent would be answered, and counted."""
    tmp = tmp_path_factory.mktemp("bundle")
    with ScriptedServer() as server:
        for extra in RUNS:
            done = run_cli([*extra, "dataset=epbench20", *scripted_overrides(server, tmp, _data_dir())])
            assert done.returncode == 0, done.stderr[-3000:]
        runs = sorted(str(p) for p in (tmp / "runs" / "epbench20").iterdir())
        import subprocess

        export = [sys.executable, "-m", "memeval", "bundle", "export", *runs, "--name", "scripted",
                  "--out", str(tmp / "results"), "--notes", str(tmp / "notes.md")]
        (tmp / "notes.md").write_text("# Build notes\n\nGraphRAG was not run: example gap.\n")
        done = subprocess.run(export, capture_output=True, text=True, cwd=ROOT, timeout=300)
        # the scripted answers never find their gold: both runs fail gold_unit_recall and gold_strings
        # (the share of gold strings in the contexts), and notes that do not say why stop the export
        assert done.returncode == 2 and ("embedding_rag gold_unit_recall, embedding_rag gold_strings, "
                                         "seem gold_unit_recall, seem gold_strings") in done.stderr, done.stderr
        assert not (tmp / "results" / "scripted").exists()
        (tmp / "notes.md").write_text("# Build notes\n\nGraphRAG was not run: example gap.\n\n"
                                      "- embedding_rag and seem fail `gold_unit_recall` and `gold_strings`: "
                                      "scripted replies.\n")
        done = subprocess.run(export, capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr[-3000:]
        yield server, tmp, tmp / "results" / "scripted"


def _verify(bundle: Path) -> tuple[int, str]:
    out: list[str] = []
    rc = verify_bundle(bundle, log=out.append)
    return rc, "\n".join(out)


def _copy(bundle: Path, tmp: Path) -> Path:
    return Path(shutil.copytree(bundle, tmp / "copy"))


def _rehash(bundle: Path, rel: str) -> None:
    """Update the manifest for an edited file: the edit must then be caught by the replay itself."""
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["files"][rel] = hashlib.sha256((bundle / rel).read_bytes()).hexdigest()
    (bundle / "manifest.json").write_text(json.dumps(manifest))


def _run_rel(bundle: Path, method: str) -> str:
    manifest = json.loads((bundle / "manifest.json").read_text())
    return next(r["path"] for r in manifest["runs"] if r["method"] == method)


def test_export_layout_and_verify_passes_without_any_request(made, monkeypatch) -> None:
    server, tmp, bundle = made
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert {r["method"] for r in manifest["runs"]} == {"embedding_rag", "seem"}
    for rel in ("README.md", "calls.jsonl.gz", "report/report.md", "report/report.html", "explorer/index.html",
                "explorer/data.js", "explorer/vendor/vega-bundle.js"):
        assert rel in manifest["files"], rel
    seem = next(r for r in manifest["runs"] if r["method"] == "seem")
    assert seem["index_artifacts"] and (bundle / seem["index_artifacts"] / "epbench20" / "memory.json").is_file()
    for r in manifest["runs"]:
        for name in ("config.yaml", "meta.json", "predictions.jsonl", "judgments.jsonl", "metrics.json",
                     "usage.json", "usage.jsonl", "results.md", "index.json"):
            assert f"{r['path']}/{name}" in manifest["files"], (r["path"], name)
        assert r["calls"] == len((bundle / r["keys"]).read_text().split()) > 0
    with gzip.open(bundle / "calls.jsonl.gz", "rt") as fh:
        exported = {json.loads(line)["key"] for line in fh}
    assert exported == {k for r in manifest["runs"] for k in (bundle / r["keys"]).read_text().split()}
    assert manifest["calls"]["entries"] == len(exported)
    assert manifest["data_versions"] and manifest["git_commit"] and manifest["versions"]["numpy"]
    readme = (bundle / "README.md").read_text()
    assert "[NOTES.md](NOTES.md)" in readme and "NOTES.md" in manifest["files"]
    assert "[explorer/index.html](explorer/index.html)" in readme and manifest["explorer"]["dir"] == "explorer"
    notes = (bundle / "NOTES.md").read_text()
    assert "example gap" in notes  # the hand-written notes, then the facts the export generated
    assert notes.index("example gap") < notes.index("<!-- run facts:") < notes.index("<!-- end of run facts -->")
    assert "| seem | 2 |" in notes and "Judge failures: none in any run." in notes
    table = notes.split("### Health of every run")[1]  # generated: a row per check, a column per run
    assert "| scope | check | threshold | embedding_rag | seem |" in table and "| context | gold_unit_recall |" in table
    assert "no reason for" not in notes
    # the index folder's own usage record travels with the bundle (written by the export's replay,
    # which rebuilt the index from the cache), so the report shows SEEM's index build
    record = json.loads((bundle / seem["index_artifacts"] / "index_usage.json").read_text())
    assert record["corpora"]["epbench20"][0]["calls"] > 0
    # it is the record the run's own index folder kept (the build paid fresh calls), not the
    # export's replay's (all cached, and a package's replay may make a few more or fewer calls)
    built = json.loads((tmp / "runs" / "_indexes" / Path(seem["index_artifacts"]).name / "index_usage.json").read_text())
    assert record == built and record["corpora"]["epbench20"][0]["fresh_calls"] > 0
    t3 = (bundle / "report" / "report.md").read_text().split("Table 3 shape")[1].split("###")[0]
    seem_row = next(r for r in t3.splitlines() if r.startswith("| seem |"))
    assert "†" not in seem_row and seem_row.split(" | ")[3] not in ("0", "1")  # index calls from the record
    assert "MIT" in readme and "not accuracy against human labels" in readme and "GPT-4o" in readme
    assert "runs/epbench20/" in (bundle / "report" / "report.md").read_text()
    assert "/tmp" not in (bundle / "report" / "report.md").read_text()

    from memeval.model_access.local_server import LocalServerPool

    monkeypatch.setattr(LocalServerPool, "start", lambda *a, **k: pytest.fail("verify started a model server"))
    before = server.count()
    rc, out = _verify(bundle)
    assert rc == 0, out
    assert out.count("\nOK   runs/epbench20/") == 2 and "calls replayed" in out
    assert "explorer: explorer/ is current" in out
    assert out.splitlines()[-1].startswith("verify OK: 2/2 runs")
    assert server.count() == before, "verify sent a request to the model server"


def test_large_jsonl_files_ship_packed_and_read_as_the_plain_ones(made, tmp_path, monkeypatch) -> None:
    """A run's JSONL file over the size bound ships as NAME.jsonl.xz, and the readers above the
    run folder (run loading, health, the facts in NOTES.md, the explorer that verify rebuilds)
    see the same rows as from the plain file."""
    import memeval.cli.bundle.export as export_mod
    from memeval.evaluation.runs.folder import RunFolder
    from memeval.evaluation.runs.scored import load_run

    _, tmp, plain = made
    monkeypatch.setattr(export_mod, "PACK_MIN_BYTES", 0)  # every JSONL file is "large"
    runs = sorted((tmp / "runs" / "epbench20").iterdir())
    from memeval.cli.judge_matrix import main as judge_matrix

    assert judge_matrix([*map(str, runs), "--criteria", "model_free", "--out", str(tmp_path / "jm")]) == 0
    other = json.loads((tmp_path / "jm" / "judge_matrix.json").read_text())
    other["runs"][0]["run"] = "/elsewhere/vanilla-0000000000"
    (tmp_path / "jm_other").mkdir()
    (tmp_path / "jm_other" / "judge_matrix.json").write_text(json.dumps(other))
    with pytest.raises(BundleError, match="made from runs this export does not bundle: vanilla-0000000000"):
        export_bundle(runs, "x", out_root=tmp_path, notes=tmp / "notes.md", judge_matrix=tmp_path / "jm_other")
    stale = json.loads((tmp_path / "jm" / "judge_matrix.json").read_text())
    stale["runs"][0]["health"] = "ok"  # what a run's health said before a check was added
    (tmp_path / "jm_stale").mkdir()
    (tmp_path / "jm_stale" / "judge_matrix.json").write_text(json.dumps(stale))
    with pytest.raises(BundleError, match="shows health the runs no longer have"):
        export_bundle(runs, "x", out_root=tmp_path, notes=tmp / "notes.md", judge_matrix=tmp_path / "jm_stale")
    packed = export_bundle(runs, "packed", out_root=tmp_path, log=lambda *_: None, notes=tmp / "notes.md",
                           judge_matrix=tmp_path / "jm")  # the matrix ships too: report and explorer show it
    assert json.loads((packed / "manifest.json").read_text())["judge_matrix"]["json"] == "judge_matrix/judge_matrix.json"
    shipped = json.loads((packed / "judge_matrix" / "judge_matrix.json").read_text())["runs"]
    assert sorted(e["run"] for e in shipped) == sorted(_run_rel(packed, r.name.split("-")[0]) for r in runs)
    assert "Judge-sensitivity matrix" in (packed / "report" / "report.md").read_text()
    assert "judge_matrix/" in (packed / "README.md").read_text()
    files = json.loads((packed / "manifest.json").read_text())["files"]
    for rel in (_run_rel(packed, "seem"), _run_rel(packed, "embedding_rag")):
        for name in ("predictions.jsonl", "judgments.jsonl", "usage.jsonl"):
            assert f"{rel}/{name}.xz" in files and f"{rel}/{name}" not in files, (rel, name)
            assert RunFolder(packed / rel).read_jsonl(name) == RunFolder(plain / rel).read_jsonl(name)
        a, b = load_run(packed / rel), load_run(plain / rel)
        assert a.predictions == b.predictions and a.judgments == b.judgments and a.predictions
    notes = lambda b: (b / "NOTES.md").read_text().split("<!-- run facts:")[1]  # noqa: E731
    assert notes(packed) == notes(plain)
    rc, out = _verify(packed)
    assert rc == 0, out
    assert "explorer: explorer/ is current" in out
    again = export_bundle([packed / _run_rel(packed, "seem")], "again", out_root=tmp_path, log=lambda *_: None,
                          allow_unexplained=True)  # no notes: the fail is listed as unexplained
    assert "no reason for** (exported with `--allow-unexplained-fails`): seem gold_unit_recall" \
        in (again / "NOTES.md").read_text()
    assert f"{_run_rel(again, 'seem')}/predictions.jsonl.xz" in json.loads((again / "manifest.json").read_text())["files"]


def test_verify_fails_when_a_metrics_json_is_edited(made, tmp_path) -> None:
    bundle = _copy(made[2], tmp_path)
    rel = f"{_run_rel(bundle, 'embedding_rag')}/metrics.json"
    metrics = json.loads((bundle / rel).read_text())
    metrics["overall"]["f1"] = 0.999
    (bundle / rel).write_text(json.dumps(metrics, indent=2))
    rc, out = _verify(bundle)
    assert rc == 1 and "sha256 mismatch" in out and rel in out  # the manifest catches it first
    _rehash(bundle, rel)  # a consistent forgery: the replay itself must catch it
    rc, out = _verify(bundle)
    assert rc == 1, out
    assert "metrics.json differs: overall.f1: 0.999 ->" in out and "FAIL runs/epbench20/embedding_rag" in out
    assert "OK   runs/epbench20/seem" in out and out.splitlines()[-1].startswith("verify FAILED: 1 of 2")


def test_verify_fails_on_a_missing_call_without_contacting_the_server(made, tmp_path) -> None:
    server, _, original = made
    bundle = _copy(original, tmp_path)
    manifest = json.loads((bundle / "manifest.json").read_text())
    keys = {r["method"]: set((bundle / r["keys"]).read_text().split()) for r in manifest["runs"]}
    with gzip.open(bundle / "calls.jsonl.gz", "rt") as fh:
        lines = fh.readlines()
    seem_only = [ln for ln in lines if json.loads(ln)["key"] in keys["seem"] - keys["embedding_rag"]
                 and "text" in json.loads(ln)["value"]]  # a chat call only SEEM made
    lines.remove(seem_only[0])
    with gzip.open(bundle / "calls.jsonl.gz", "wt") as fh:
        fh.writelines(lines)
    rc, out = _verify(bundle)
    assert rc == 1 and "calls.jsonl.gz" in out and "sha256 mismatch" in out
    _rehash(bundle, "calls.jsonl.gz")
    before = server.count()
    rc, out = _verify(bundle)
    assert rc == 1, out
    # the removed call may be an answer or a judge call (line order follows the keys): either names its model
    assert "FAIL runs/epbench20/seem" in out and "new model call needed: chat scripted-" in out, out
    assert json.loads(seem_only[0])["key"] in out  # the missing call is named by its key
    assert "OK   runs/epbench20/embedding_rag" in out
    assert server.count() == before, "a cache miss reached the model server"


def test_verify_fails_when_a_bundled_file_changes(made, tmp_path) -> None:
    bundle = _copy(made[2], tmp_path)
    rel = f"{_run_rel(bundle, 'seem')}/predictions.jsonl"
    with open(bundle / rel, "ab") as fh:
        fh.write(b" ")
    rc, out = _verify(bundle)
    assert rc == 1 and f"sha256 mismatch (changed since export): {rel}" in out
    assert "calls replayed" not in out  # nothing is replayed from a bundle that fails its manifest
    (bundle / "README.md").unlink()
    rc, out = _verify(bundle)
    assert rc == 1 and "missing: README.md" in out


def test_import_loads_calls_into_an_empty_cache(made, tmp_path) -> None:
    bundle = made[2]
    entries = json.loads((bundle / "manifest.json").read_text())["calls"]["entries"]
    cache_path = tmp_path / "empty.sqlite"
    out: list[str] = []
    assert import_calls(bundle, cache_path, log=out.append) == 0
    cache = open_cache(cache_path, "sqlite")
    assert len(list(cache.items())) == entries > 0
    cache.close()
    assert f"{entries} added, 0 already cached" in out[-1]
    assert import_calls(bundle, cache_path, log=out.append) == 0
    assert f"0 added, {entries} already cached" in out[-1]  # never overwrites
    tampered = _copy(bundle, tmp_path)
    (tampered / "calls.jsonl.gz").write_bytes(b"")
    assert import_calls(tampered, tmp_path / "other.sqlite", log=out.append) == 1


def test_export_refuses_a_run_whose_calls_are_not_all_cached(made, tmp_path) -> None:
    _, tmp, bundle = made
    partial = tmp_path / "partial.sqlite"
    cache = open_cache(partial, "sqlite")
    with gzip.open(bundle / "calls.jsonl.gz", "rt") as fh:
        rows = [json.loads(line) for line in fh]
    for row in rows[1:]:  # every call but the first
        cache.put(row["key"], row["value"])
    cache.close()
    runs = sorted((tmp / "runs" / "epbench20").iterdir())
    with pytest.raises(BundleError) as err:
        export_bundle(runs, "partial", tmp_path / "results", cache=partial, log=lambda *_: None, allow_unexplained=True)
    assert "new model call needed" in str(err.value) and rows[0]["key"] in str(err.value)
    assert not (tmp_path / "results" / "partial").exists()


def test_a_local_server_config_replays_without_starting_the_server(made, tmp_path, monkeypatch) -> None:
    """The default llm=local starts llama.cpp eagerly; a replay must not (every call is cached)."""
    import yaml

    from memeval.model_access.local_server import LocalServerPool

    _, tmp, _ = made
    src = next((tmp / "runs" / "epbench20").glob("embedding_rag-*"))
    run = Path(shutil.copytree(src, tmp_path / src.name))
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    for part in ("llm", "judge"):  # not in the run's identity or cache keys: same folder, same calls
        cfg[part]["server"] = {"_target_": "memeval.model_access.local_server.LlamaServerSpec", "model": "qwen2.5-coder-0.5b"}
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    monkeypatch.setattr(LocalServerPool, "start", lambda *a, **k: pytest.fail("a replay started llama.cpp"))
    res = rerun(run, tmp_path / "work", tmp / "cache.sqlite", "sqlite")
    assert res.ok, res.problems()
    assert res.out_dir is not None and res.out_dir.name == run.name and len(res.keys) > 0


def test_a_run_saved_with_a_pre_layout_protocol_path_replays(made, tmp_path) -> None:
    """Run folders made before evaluation/ had family subpackages name their protocol by its old
    path (the first real bundle failed on them); the replay maps it to today's, same folder name."""
    import yaml

    from memeval.evaluation.runs.upgrade import first_target

    _, tmp, _ = made
    src = next((tmp / "runs" / "epbench20").glob("embedding_rag-*"))
    run = Path(shutil.copytree(src, tmp_path / src.name))
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    old = first_target(cfg["dataset"]["protocol"]["_target_"])  # before the families and the namespace
    assert old.startswith("evaluation.") and old.count(".") == 2
    cfg["dataset"]["protocol"]["_target_"] = old
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    res = rerun(run, tmp_path / "work", tmp / "cache.sqlite", "sqlite")
    assert res.ok, res.problems()
    assert res.out_dir is not None and res.out_dir.name == run.name


def _post(url: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_baselines_proxy_calls_are_recorded_and_refused(tmp_path) -> None:
    """graphrag/lightrag/hipporag2 call back through methods.external.proxy; a replay sees those
    calls (shared cache, copied `dry`) and refuses an uncached one with a 400, sending nothing."""
    from memeval.methods.external.proxy import ModelProxy
    from memeval.model_access.chat import ChatModel
    from memeval.model_access.embed import OpenAICompatibleEmbedder
    from memeval.model_access.gate import CallSettings

    chat_req = {"model": "x", "messages": [{"role": "user", "content": "Material: Anna Smith met Bob Jones."}]}
    emb_req = {"model": "y", "input": ["a chapter", "another chapter"]}
    cache = ResponseCache(tmp_path / "c.sqlite")
    with ScriptedServer() as server:
        def components(c: object, dry: object = None) -> tuple[ChatModel, OpenAICompatibleEmbedder]:
            settings = CallSettings(dry=dry)  # what harness.build gives inside harness.replay.replaying
            return (ChatModel("scripted-llm", base_url=server.base_url, api_key_env=None, cache=c, settings=settings),
                    OpenAICompatibleEmbedder("hashed-bow", base_url=server.base_url, api_key_env=None, cache=c,
                                             settings=settings))

        with ModelProxy(*components(cache)) as proxy:  # a normal run: pays and caches
            assert _post(proxy.base_url + "/chat/completions", chat_req)[0] == 200
            assert _post(proxy.base_url + "/embeddings", emb_req)[0] == 200
        paid = server.count()
        replay = Replay()
        chat, emb = components(replay.wrap(cache), replay)
        with ModelProxy(chat, emb) as proxy:
            assert _post(proxy.base_url + "/chat/completions", chat_req)[0] == 200
            assert _post(proxy.base_url + "/embeddings", emb_req)[0] == 200
            status, body = _post(proxy.base_url + "/chat/completions",
                                 {"model": "x", "messages": [{"role": "user", "content": "never asked"}]})
        assert status == 400 and "not in the cache" in body["error"]["message"]
        assert server.count() == paid, "the replay sent a request"
    assert len(replay.keys) == 3  # one chat reply, two embeddings
    assert len(replay.refused) == 1 and "never asked" in replay.refused[0]


def test_export_refuses_to_write_a_secret(made, tmp_path, monkeypatch) -> None:
    """A value of a key-named environment variable found anywhere in the bundle stops the export."""
    _, tmp, _ = made
    monkeypatch.setenv("LEAKY_API_KEY", "scripted-judge")  # a string every run's meta.json holds
    run = next((tmp / "runs" / "epbench20").glob("embedding_rag-*"))
    with pytest.raises(BundleError, match="a secret from the environment appears in"):
        export_bundle([run], "leaky", tmp_path / "results", log=lambda *_: None, allow_unexplained=True)
    assert not (tmp_path / "results" / "leaky").exists()


def test_replay_takes_every_call_the_dry_protocol_sends() -> None:
    """A replay and a cost estimate receive the same dry-protocol calls (model_access/gate.py): a
    parameter added to one (text_format, with the compact GSW wire) must reach the other, or a
    bundle's verify crashes where it should refuse."""
    import inspect

    from memeval.harness.replay import Replay
    from memeval.model_access.dry import DryRecorder

    for name in ("chat", "hit", "embed"):
        shape = lambda f: [(p.kind, p.default is p.empty) for p in inspect.signature(f).parameters.values()]  # noqa: E731
        ours, theirs = shape(getattr(Replay, name)), shape(getattr(DryRecorder, name))
        assert ours == theirs, (name, ours, theirs)


def test_export_refuses_files_the_enclosing_git_repository_ignores(made, tmp_path) -> None:
    """A bare `data` rule in .gitignore once kept a cognee index's data/ folder out of a committed
    bundle, which then failed verify on every clone. The same shape here: a bare `keys` rule
    matches the bundle's keys/ folder; export names the rule and writes nothing."""
    import subprocess

    _, tmp, _ = made
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text("keys\n")
    runs = sorted((tmp / "runs" / "epbench20").iterdir())
    with pytest.raises(BundleError) as err:
        export_bundle(runs, "ignored", repo / "results", log=lambda *_: None, allow_unexplained=True)
    assert ".gitignore:1:keys" in str(err.value) and "results/ignored/keys/" in str(err.value)
    assert not (repo / "results" / "ignored").exists()
    (repo / ".gitignore").write_text("/keys\n")  # the root folder only: the same export goes through
    assert (export_bundle(runs, "ignored", repo / "results", log=lambda *_: None, allow_unexplained=True) / "manifest.json").exists()


def test_every_file_of_a_shipped_bundle_is_tracked() -> None:
    import subprocess

    tracked = set(subprocess.run(["git", "ls-files", "results"], capture_output=True, text=True, cwd=ROOT,
                                 check=True).stdout.splitlines())
    if not tracked:
        pytest.skip("not a git checkout")
    for manifest in sorted((ROOT / "results").glob("*/manifest.json")):
        rel = manifest.parent.relative_to(ROOT)
        missing = [f for f in json.loads(manifest.read_text())["files"] if f"{rel}/{f}" not in tracked]
        assert not missing, f"{rel}: {len(missing)} manifest files are not in git, e.g. {missing[:2]}"
