"""Sweeps: a failed job reports its message and the sweep goes on; servers are shared per spec."""

from __future__ import annotations

import json

from conftest import run_cli, scripted_overrides


def test_config_error_fails_one_job_and_the_sweep_goes_on(scripted, tmp_path, data_dir) -> None:
    r = run_cli(["-m", "method=vanilla", "dataset=epbench20", "subset.n=2",
                 "judge.api_key_env=null,MISSING_KEY_FOR_THIS_TEST", *scripted_overrides(scripted, tmp_path, data_dir)])
    assert r.returncode == 1, r.stderr[-3000:]
    assert "needs an API key: set the environment variable MISSING_KEY_FOR_THIS_TEST" in r.stderr
    assert "Traceback" not in r.stderr
    assert "sweep: 1 of 2 job(s) finished" in r.stderr
    (sweep,) = (tmp_path / "runs" / "_multirun").iterdir()
    jobs = {p.parent.name: json.loads(p.read_text()) for p in sweep.glob("*/job.json")}
    assert "run_dir" in jobs["0"] and "ConfigError" in jobs["1"]["error"]
    report = (sweep / "report.md").read_text()
    assert "| vanilla |" in report and "## Failed jobs" in report and "MISSING_KEY_FOR_THIS_TEST" in report


def test_a_single_run_leaves_no_sweep_files_in_the_working_directory(scripted, tmp_path, data_dir) -> None:
    import shutil
    import subprocess
    import sys

    from conftest import ROOT

    work = tmp_path / "cwd"
    shutil.copytree(ROOT / "conf", work / "conf")
    shutil.copy(ROOT / "run.py", work / "run.py")
    r = subprocess.run([sys.executable, "run.py", "method=vanilla", "subset.n=1",
                        *scripted_overrides(scripted, tmp_path, data_dir)], cwd=work, capture_output=True,
                       text=True, timeout=300, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr[-2000:]
    assert sorted(p.name for p in work.iterdir()) == ["conf", "run.py"]


class _Proc:
    pid = 0

    def poll(self) -> None:
        return None


def test_one_local_server_per_spec_reused_across_jobs_and_stopped_at_the_end(monkeypatch) -> None:
    """The pipeline's process-wide pool: jobs with the same model spec share one server."""
    from types import SimpleNamespace

    from memeval.harness import pipeline
    from memeval.model_access import local_server as ls

    launched, stopped = [], []

    def fake_launch(self, binary, spec):
        launched.append(spec.model)
        return ls._Server(spec, _Proc(), 40000 + len(launched), tmp_log)

    tmp_log = ls.Path("/dev/null")
    monkeypatch.setattr(ls.LocalServerPool, "_launch", fake_launch)
    monkeypatch.setattr(ls, "find_llama_server", lambda: ls.Path("/bin/true"))
    monkeypatch.setattr(ls.LlamaServerSpec, "model_path", lambda self: ls.Path("/dev/null"))
    monkeypatch.setattr(ls, "_stop", lambda srv, grace_s=5.0: stopped.append(srv.spec.model))
    monkeypatch.setattr(pipeline, "_pool", None)

    class Client(SimpleNamespace):  # a client double: the harness tells it where its server is
        def serve_at(self, base_url: str) -> None:
            self.base_url = base_url

    def job(answer: str, judge: str) -> list[str]:
        comps = SimpleNamespace(**{k: Client(server=ls.LlamaServerSpec(model=m), base_url=None)
                                   for k, m in (("llm", answer), ("judge", judge))},
                                embedder=Client(server=None, base_url="http://embedder"))
        pipeline._start_servers(comps, ["index", "answer", "judge"])
        return [comps.llm.base_url, comps.judge.base_url]

    first = job("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
    second = job("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
    third = job("qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b")
    assert launched == ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"]  # one per spec, reused
    assert first == second and third == [first[1], first[1]]
    # an index-only run starts no judge server
    comps = SimpleNamespace(llm=Client(server=ls.LlamaServerSpec(model="qwen2.5-coder-0.5b"), base_url=None),
                            judge=Client(server=ls.LlamaServerSpec(model="/nowhere/judge-only.gguf"), base_url=None),
                            embedder=Client(server=None, base_url="http://embedder"))
    pipeline._start_servers(comps, ["index"])
    assert comps.judge.base_url is None and comps.llm.base_url == first[0]
    assert "/nowhere/judge-only.gguf" not in launched
    from memeval.harness.sweep import SweepReport

    SweepReport().on_multirun_end(SimpleNamespace(hydra=SimpleNamespace(
        sweep=SimpleNamespace(dir="/nonexistent-sweep-dir"))))
    assert sorted(stopped) == ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"]
