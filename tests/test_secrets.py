"""Secrets: the key from the environment is sent to the endpoint and written down nowhere.

The scripted server records request headers, so these tests can fail: they prove the key was
used (every request carried it) before proving it is absent from the run folder, the index
folder, the cache, the console, the W&B files and a baseline worker's log.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from conftest import run_cli, scripted_overrides

from memeval.methods.external import envs
from memeval.methods.external.proxy import ModelProxy
from memeval.methods.external.worker_protocol import WorkerClient
from memeval.model_access.cache import ResponseCache
from memeval.model_access.chat import ChatModel
from memeval.model_access.embed import OpenAICompatibleEmbedder
from memeval.model_access.usage import UsageLedger

SECRET = "sk-test-DO-NOT-LEAK-5f3a9c1e77"
WORKERS = Path(envs.__file__).parent / "workers"


def _auth(request: dict) -> str | None:
    return next((v for k, v in request["headers"].items() if k.lower() == "authorization"), None)


def _leaks(root: Path) -> list[Path]:
    files = [f for f in root.rglob("*") if f.is_file()]
    assert files, f"nothing was written under {root}"
    return [f for f in files if SECRET.encode() in f.read_bytes()]


def test_key_is_sent_and_never_written_with_wandb_offline(scripted, tmp_path, data_dir) -> None:
    args = ["dataset=epbench20", "subset.n=2", *scripted_overrides(scripted, tmp_path, data_dir),
            "llm.api_key_env=MY_KEY", "judge.api_key_env=MY_KEY", "embedder.api_key_env=MY_KEY",
            "tracking=wandb_offline"]
    r = run_cli(args, env={"MY_KEY": SECRET, "WANDB_MODE": "offline"})
    assert r.returncode == 0, r.stderr[-3000:]
    assert scripted.requests and all(_auth(q) == f"Bearer {SECRET}" for q in scripted.requests), \
        "every chat and embedding request must carry the key from the environment"
    assert SECRET not in r.stdout + r.stderr
    wandb_files = [f for f in (tmp_path / "runs").rglob("*") if "wandb" in f.parts and f.is_file()]
    assert wandb_files, "tracking=wandb_offline wrote no W&B files: nothing was checked there"
    assert _leaks(tmp_path) == []  # run folders, index folders, W&B files, run.log, the cache


def test_baseline_worker_never_sees_the_key(scripted, tmp_path, monkeypatch) -> None:
    """A worker starts from a clean environment and talks to the loopback proxy with a dummy key;
    the proxy calls the endpoint with the real one."""
    monkeypatch.setenv("MY_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    cache, ledger = ResponseCache(tmp_path / "c.sqlite"), UsageLedger()
    chat = ChatModel("scripted", base_url=scripted.base_url, api_key_env="MY_KEY", cache=cache, ledger=ledger)
    emb = OpenAICompatibleEmbedder("hashed", base_url=scripted.base_url, api_key_env="MY_KEY", cache=cache,
                                   ledger=ledger)
    proxy = ModelProxy(chat, emb)
    url = proxy.start()
    env_dir = tmp_path / "env"
    (env_dir / "bin").mkdir(parents=True)
    script = tmp_path / "leaky_worker.py"
    script.write_text(f"import sys\nsys.path.insert(0, {str(WORKERS)!r})\n" + textwrap.dedent("""
        import json, os, urllib.request
        from _serve import serve, log
        def ask(p):
            log("environment:", json.dumps(dict(os.environ)))  # a package that logs everything
            req = urllib.request.Request(p["url"] + "/chat/completions", data=json.dumps({
                "model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]}).encode(),
                headers={"Content-Type": "application/json", "Authorization": "Bearer sk-memeval-local-proxy"})
            reply = urllib.request.urlopen(req, timeout=30).read().decode()
            log("reply:", reply)
            return json.loads(reply)["choices"][0]["message"]["content"]
        serve({"ask": ask})
    """))
    worker = WorkerClient("leaky", Path(sys.executable), script, envs.worker_env(env_dir, {}),
                          cwd=tmp_path / "cwd", log_path=tmp_path / "index" / "worker.log")
    try:
        assert worker.call("ask", {"url": url})["result"] == "scripted reply"
    finally:
        worker.close()
        proxy.close()
    log = (tmp_path / "index" / "worker.log").read_text()
    assert "environment:" in log and "reply:" in log, "the worker logged nothing: the check proves nothing"
    assert SECRET not in log
    assert [_auth(q) for q in scripted.requests] == [f"Bearer {SECRET}"], "the proxy used the real key"
