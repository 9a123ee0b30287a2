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
