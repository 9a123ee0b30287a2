"""W&B tracking, offline: the run's config (redacted), metrics per bucket and the per-question table."""

from __future__ import annotations

from conftest import run_cli, scripted_overrides


def test_wandb_offline_run_is_written(scripted, tmp_path, data_dir) -> None:
    secret = "sk-wandb-should-not-see-this-987"
    args = ["method=embedding_rag", "dataset=epbench20", "subset.n=3",
            *scripted_overrides(scripted, tmp_path, data_dir), "tracking=wandb_offline",
            "llm.api_key_env=MY_KEY", "judge.api_key_env=MY_KEY"]
    r = run_cli(args, env={"MY_KEY": secret, "WANDB_MODE": "offline"})
    assert r.returncode == 0, r.stderr[-3000:]
    runs = list((tmp_path / "runs").rglob("offline-run-*"))
    assert runs, "no offline W&B run folder"
    blobs = b"".join(f.read_bytes() for f in runs[0].rglob("*") if f.is_file())
    assert b"overall/f1" in blobs and b"buckets/" in blobs and b"per_question" in blobs
    assert secret.encode() not in blobs


def test_wandb_one_run_per_folder_grouped_by_sweep_with_bucket_metrics(scripted, tmp_path, data_dir) -> None:
    import json
    import subprocess
    import sys

    from wandb_records import summary

    args = ["-m", "method=vanilla,embedding_rag", "dataset=epbench20", "subset.n=3",
            *scripted_overrides(scripted, tmp_path, data_dir), "tracking=wandb_offline"]
    for _ in range(2):  # the rerun must resume the same W&B runs, not add duplicates
        r = run_cli(args, env={"WANDB_MODE": "offline"})
        assert r.returncode == 0, r.stderr[-3000:]
    sweeps = sorted(p.name for p in (tmp_path / "runs" / "_multirun").iterdir())
    folders = sorted((tmp_path / "runs" / "epbench20").iterdir())
    assert len(folders) == 2
    for folder in folders:
        files = sorted(folder.glob("wandb/offline-run-*/*.wandb"))
        assert len(files) == 2, files
        recs = [summary(f) for f in files]
        assert {x["run"].run_id for x in recs} == {f"epbench20-{folder.name}"}
        assert [x["run"].run_group for x in recs] == sweeps  # group = the sweep
        method = folder.name.rsplit("-", 1)[0]
        assert {x["run"].job_type for x in recs} == {method}
        for x in recs:
            for b in ("0", "1"):
                assert {f"buckets/{b}/{s}" for s in ("precision", "recall", "f1")} <= x["history"]
            assert "charts/f1_by_bucket_table/_type" in x["history"] and "per_question/_type" in x["history"]
            kinds = {a.type: a for a in x["artifacts"]}
            assert "run_folder" in kinds
            names = {c.path for c in kinds["run_folder"].manifest.contents}
            assert {"metrics.json", "predictions.jsonl", "judgments.jsonl", "usage.json"} <= names
        tables = list(folder.glob("wandb/offline-run-*/files/media/table/per_question_*.table.json"))
        t = json.loads(tables[0].read_text())
        gold = t["columns"].index("gold")
        assert all(isinstance(row[gold], str) and row[gold].startswith("[") for row in t["data"])
    dry = subprocess.run([sys.executable, "-m", "wandb", "sync", "--dry-run",
                          *map(str, (tmp_path / "runs").rglob("offline-run-*"))],
                         capture_output=True, text=True, timeout=120, env={"WANDB_MODE": "offline",
                                                                           "PATH": "/usr/bin:/bin"})
    assert "Would sync 4 run(s)" in dry.stdout + dry.stderr, dry.stdout + dry.stderr
