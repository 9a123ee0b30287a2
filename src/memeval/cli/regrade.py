"""`memeval regrade RUN_DIR... --set dataset.protocol.grounding_version=4`: a saved run under a
changed scoring setting, from the model-call cache alone.

A new grounding version (or any protocol setting that only changes how answers are judged and
scored) changes the run's identity, so it is a new run folder, not an edit of the old one. Its
answers and judge calls are the old run's, already paid for: this reruns the run's saved config
with the settings changed inside a strict replay (harness.replay), so no local server starts and
any call that is not cached is refused and named instead of sent. The old folder is never
touched. A setting that changes what the model is asked (the answer prompt, the judge model)
needs fresh calls: the command says so and leaves that to `python run.py`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _parse_set(items: list[str]) -> list[tuple[str, Any]]:
    import yaml

    out = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--set {item!r}: write KEY=VALUE, e.g. dataset.protocol.grounding_version=4")
        out.append((key.strip(), yaml.safe_load(value)))
    return out


def _headline(run: Path) -> str:
    """The run's headline as its protocol presents it ("F1 0.355")."""
    from memeval.evaluation.runs.scored import load_run

    r = load_run(run)
    value = (r.metrics.get(r.presentation.overall) or {}).get(r.presentation.metric)
    return f"{r.presentation.label} {value:.3f}" if isinstance(value, (int, float)) else "?"


def regrade(run: Path, settings: list[tuple[str, Any]], output_root: Path, index_root: Path | None,
            cache: Path | None = None) -> int:
    """Replay `run` with `settings` applied, writing the new run folder under `output_root`. The
    data is read where the run read it (its `data_dir` joins the run's identity, so another path
    would name another folder than `python run.py` with the same settings)."""
    from omegaconf import OmegaConf

    from memeval.cli.bundle.rerun import replay_config
    from memeval.evaluation.runs.folder import config_hash
    from memeval.evaluation.runs.upgrade import upgrade_config
    from memeval.harness.build import identity
    from memeval.harness.pipeline import run as run_pipeline
    from memeval.harness.replay import Replay, replaying
    from memeval.harness.resolvers import register_resolvers

    register_resolvers()
    with tempfile.TemporaryDirectory(prefix="regrade-") as tmp:
        cfg = replay_config(run, Path(tmp), cache, None, None)
        known = upgrade_config(cfg)  # an older run's config lacks keys added since; it means their old values
        for key, value in settings:
            if OmegaConf.select(known, key, default="__missing__") == "__missing__":
                print(f"{run}: its config has no setting {key!r}; nothing was run", file=sys.stderr)
                return 2
            OmegaConf.update(cfg, key, value, merge=False)
        cfg.output_root = str(output_root)
        name = cfg.get("run_name") or f"{cfg.method.name}-{config_hash(identity(cfg))}"
        if (output_root / run.parent.name / str(name)).resolve() == run.resolve():
            print(f"{run}: with these settings the run keeps its folder, so regrading would rewrite it; "
                  "use another --output-root (or --set run_name=NEW_NAME)", file=sys.stderr)
            return 2
        # where `python run.py` keeps them: an index the run reuses, or rebuilds from the cache,
        # stays readable for the health checks and the explorer after this returns
        cfg.index_root = str(index_root or output_root / "_indexes")
        replay = Replay()
        t0 = time.perf_counter()
        with replaying(replay):
            try:
                out = run_pipeline(cfg)  # the run folder (None only for stages=[estimate])
            except Exception:  # noqa: BLE001 - reported with the calls it would have needed
                if not replay.refused:
                    raise
                out = None
        if replay.refused:
            print(f"{run}: the changed settings need {len(replay.refused)} call(s) the cache does not hold, "
                  f"e.g. {replay.refused[0][:300]}\nrun it with `python run.py` instead", file=sys.stderr)
            return 1
        assert out is not None
        print(f"{run.name} ({_headline(run)}) -> {out} ({_headline(out)}): {len(replay.keys)} cached calls, "
              f"0 new, {time.perf_counter() - t0:.0f} s")
    return 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="memeval regrade", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="saved run folders (holding config.yaml)")
    ap.add_argument("--set", dest="settings", nargs="+", required=True, metavar="KEY=VALUE",
                    help="settings to change, dotted as in the run's config.yaml")
    ap.add_argument("--output-root", type=Path, default=Path("runs"),
                    help="where the new run folders go (default runs/, beside new runs)")
    ap.add_argument("--index-root", type=Path, default=None,
                    help="where the index folders are (default: OUTPUT_ROOT/_indexes, as for `python run.py`; "
                         "an index not there is rebuilt from the cache)")
    ap.add_argument("--cache", type=Path, default=None,
                    help="the model-call cache to replay from (default: the run's own cache_path)")
    args = ap.parse_args(argv)
    settings = _parse_set(args.settings)
    missing = [r for r in args.runs if not (r / "config.yaml").exists()]
    if missing:
        print(f"not a run folder (no config.yaml): {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    worst = 0
    for run in args.runs:
        worst = max(worst, regrade(run, settings, args.output_root, args.index_root, args.cache))
    return worst
