"""The upgrade module: older run folders keep their folder names, index folders and numbers, and a
format-0 config means what it meant when it was saved (evaluation/runs/upgrade.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import v1_bundle, v1_run
from hydra.utils import instantiate
from omegaconf import OmegaConf

from memeval.evaluation.runs.folder import RunFolder, config_hash, json_text
from memeval.evaluation.runs.scoring import read_metrics, score_run
from memeval.evaluation.runs.upgrade import (
    RUN_FORMAT,
    FormatError,
    current_target,
    question_diagnostics,
    read_meta,
    upgrade_config,
)

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = sorted((ROOT / "results").glob("*/runs/*/*/config.yaml"))
# the v1 bundles' configs (format 0; tests/fixtures/v1_bundles), kept whatever results/ ships
V1_SAVED = sorted(p for b in ("epbench20-local", "locomo-local") for p in (v1_bundle(b) / "runs").glob("*/*/config.yaml"))
SAVED = [*BUNDLED, *V1_SAVED]


def _id(config: Path) -> str:
    return f"{'v1:' if config in V1_SAVED else ''}{config.parts[-5]}/{config.parent.name}"
DATA = ROOT / "data"


def _saved(run: Path) -> OmegaConf:
    cfg = OmegaConf.load(run / "config.yaml")
    cfg.data_dir = str(DATA)
    return cfg


@pytest.mark.parametrize("config", SAVED, ids=_id)
def test_bundled_runs_hash_to_their_folder_names(config: Path) -> None:
    from memeval.harness.build import identity

    run = config.parent
    assert run.name == f"{run.name.rsplit('-', 1)[0]}-{config_hash(identity(OmegaConf.load(config)))}"


@pytest.mark.parametrize("config", SAVED, ids=_id)
def test_bundled_runs_keep_their_index_folders(config: Path, tmp_path: Path) -> None:
    """Today's method, built from the saved config as a run builds it, names the same index folder."""
    from memeval.harness.build import build
    from memeval.harness.resolvers import register_resolvers
    from memeval.harness.stages import index_store_root
    from memeval.methods.base import Services

    if not (DATA / "epbench").exists():
        pytest.skip("benchmark data not set up (python scripts/fetch_data.py)")
    register_resolvers()
    run = config.parent
    cfg = _saved(run)
    cfg.cache_path, cfg.cache_backend, cfg.output_root = str(tmp_path / "c.sqlite"), "sqlite", str(tmp_path)
    c = build(cfg, check=False)
    method = instantiate(c.method_cfg, _partial_=True)(
        services=Services(llm=c.llm, embedder=c.embedder, cap=c.cap, store_root=Path(".")))
    try:
        saved = json.loads((run / "index.json").read_text())["index_folder"]
        assert index_store_root(c, method.params()).name == Path(saved).name
    finally:
        method.close()
        c.cache.close()


@pytest.mark.parametrize("family", ["epbench20-local/runs/epbench20", "locomo-local/runs/locomo"])
def test_old_run_folders_rescore_to_their_upgraded_numbers(family: str, tmp_path: Path) -> None:
    """A format-0 run folder rescores without a model call to exactly the metrics the upgrade
    module reads from it, writes its diagnostics beside the judgments, and rewrites no other
    stage's artifact."""
    src = v1_run(family.split("/")[0], "vanilla")  # the v1 bundle's (tests/fixtures/v1_bundles)
    if not (DATA / "epbench").exists():
        pytest.skip("benchmark data not set up (python scripts/fetch_data.py)")
    run = tmp_path / src.name
    shutil.copytree(src, run)
    text = (run / "config.yaml").read_text()  # saved with data_dir: data (relative to the repo)
    (run / "config.yaml").write_text(text.replace("data_dir: data", f"data_dir: {DATA}"))
    assert "run_format" not in json.loads((run / "meta.json").read_text())
    expected = json_text(read_metrics(RunFolder(run)))
    judgments = (run / "judgments.jsonl").read_bytes()
    meta = (run / "meta.json").read_bytes()
    score_run(RunFolder(run))
    assert (run / "metrics.json").read_text() == expected
    assert (run / "judgments.jsonl").read_bytes() == judgments and (run / "meta.json").read_bytes() == meta
    diags = question_diagnostics(run)
    assert set(diags) == {json.loads(x)["question_id"] for x in judgments.splitlines()}
    assert {d["failure_label"] for d in diags.values()} <= {
        "correct", "generation_miss", "partial_retrieval", "retrieval_miss", "unjudged"}


def _seem(fmt: int | None, **keys: str) -> dict:
    cfg: dict = {"method": {"_target_": "methods.seem.method.SEEM", "name": "seem", **keys},
                 "dataset": {"protocol": {"_target_": "evaluation.locomo.LoCoMoProtocol"}}}
    if fmt is not None:
        cfg["run_format"] = fmt
    return cfg


def test_a_format_0_config_means_what_it_meant_when_saved() -> None:
    old = upgrade_config(_seem(None))
    assert (old.method.frame_sources, old.method.frame_dates) == ("any_kept", "as_extracted")
    assert old.dataset.protocol.judge_version == 1
    assert old.dataset.protocol._target_ == "memeval.evaluation.conversations.locomo.LoCoMoProtocol"  # moved class
    explicit = upgrade_config(_seem(None, frame_sources="all_kept"))
    assert explicit.method.frame_sources == "all_kept"  # a key the config has is never touched
    new = upgrade_config(_seem(RUN_FORMAT))
    assert "frame_sources" not in new.method and "judge_version" not in new.dataset.protocol  # code defaults


def test_seem_settings_of_issue_26_read_as_before_in_a_config_of_any_format_that_lacks_them() -> None:
    """The same-event-first judge, the veto and the frame retry came after the last format change:
    a saved config (resolved, so it holds every key of its day) without them predates them, and
    reads as the level-alone judge, no veto, no retry, whatever its format."""
    for fmt in (None, 1, RUN_FORMAT):
        m = upgrade_config(_seem(fmt)).method
        assert (m.prompt_version, m.fusion_veto_days, m.frame_retry) == (2, None, False)
    kept = upgrade_config(_seem(RUN_FORMAT, prompt_version=3, fusion_veto_days=3, frame_retry=True)).method
    assert (kept.prompt_version, kept.fusion_veto_days, kept.frame_retry) == (3, 3, True)
    before = {"prompt_version": 2, "fusion_veto_days": None, "frame_retry": False, "passage_turns": None}
    seen_old = 0
    for config in SAVED:
        saved = OmegaConf.load(config)
        if current_target(saved.method._target_) != "memeval.methods.seem.method.SEEM":  # saved: its path of then
            continue
        m = upgrade_config(saved).method
        for key, old_value in before.items():  # a key the saved config holds is its own; one it lacks reads as before
            expected = saved.method.get(key, old_value)
            assert m.get(key) == expected, (config, key)
        seen_old += "prompt_version" not in saved.method
    assert seen_old >= 1  # at least one saved SEEM run (the v1 bundles') predates the issue-26 settings


def test_every_seem_code_default_is_the_shipped_default() -> None:
    import inspect

    from memeval.methods.seem.method import SEEM

    params = inspect.signature(SEEM.__init__).parameters
    for key, value in OmegaConf.to_container(OmegaConf.load(ROOT / "conf/method/seem.yaml")).items():
        if key not in ("_target_", "name"):
            default = params[key].default
            assert (list(default) if isinstance(default, tuple) else default) == value, key


def test_code_defaults_are_the_shipped_defaults() -> None:
    """A format-1 config that leaves a key out gets what conf/ ships (no second default)."""
    from memeval.evaluation.conversations.locomo import LoCoMoProtocol
    from memeval.evaluation.epbench.protocol import EpBenchProtocol
    from memeval.methods.seem.method import SEEM

    shipped = OmegaConf.load(ROOT / "conf/method/seem.yaml")
    import inspect

    params = inspect.signature(SEEM.__init__).parameters
    assert params["frame_sources"].default == shipped.frame_sources
    assert params["frame_dates"].default == shipped.frame_dates
    from memeval.harness.estimate import compose

    for cls, conf in ((EpBenchProtocol, "epbench20"), (LoCoMoProtocol, "locomo")):  # EpBench's: the fair experiment's
        assert (inspect.signature(cls.__init__).parameters["judge_version"].default
                == compose([f"dataset={conf}"]).dataset.protocol.judge_version)


def test_old_meta_names_its_judge_version_and_a_newer_format_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    (run / "meta.json").write_text(json.dumps({"protocol": {"protocol": "epbench", "credit": "raw"}}))
    assert read_meta(run)["protocol"]["judge_version"] == 1  # format 0 left version 1 out
    (run / "meta.json").write_text(json.dumps({"protocol": {"protocol": "locomo",
                                                            "judge_prompt": "locomo-judge-v2"}}))
    assert read_meta(run)["protocol"]["judge_version"] == 2
    (run / "meta.json").write_text(json.dumps({"run_format": RUN_FORMAT + 1, "protocol": {}}))
    with pytest.raises(FormatError, match="newer"):
        read_meta(run)


def test_run_folders_saved_under_old_protocol_paths_still_load_and_keep_their_names(tmp_path: Path) -> None:
    """config.yaml of an old run names e.g. evaluation.epbench.EpBenchProtocol: rescore still
    instantiates it, and today's config hashes to the same run folder name as then."""
    from hydra import compose, initialize_config_dir

    from memeval.evaluation.runs.scoring import load_protocol
    from memeval.evaluation.runs.upgrade import first_target
    from memeval.harness.build import identity
    from memeval.harness.resolvers import register_resolvers
    from memeval.harness.schema import register_schemas

    register_resolvers()
    register_schemas()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        for dataset in ("epbench20", "locomo", "longmemeval_s"):
            cfg = compose("config", overrides=[f"dataset={dataset}", "data_dir=data"])
            new = cfg.dataset.protocol._target_
            hashed = config_hash(identity(cfg))
            old = first_target(new)  # before the family subpackages, before the memeval namespace
            assert old != new.removeprefix("memeval.") and not old.startswith("memeval.")
            for saved in (old, new.removeprefix("memeval.")):
                cfg.dataset.protocol._target_ = saved
                assert config_hash(identity(cfg)) == hashed
            folder = RunFolder(tmp_path / dataset)
            (folder / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(
                {"dataset": {"protocol": OmegaConf.to_container(cfg.dataset.protocol, resolve=True)}})))
            loaded = load_protocol(folder)
            assert f"{type(loaded).__module__}.{type(loaded).__name__}" == new


def test_gsw_configs_before_run_format_3_keep_their_issue_26_behaviour() -> None:
    """GSW's conversation frame, session dates, inheritance, kind checks and summary budget are
    off in any saved config below format 3 that lacks them, and the code defaults are conf/'s."""
    import inspect

    from memeval.methods.gsw.method import GSW

    old = {"speaker_frame": False, "unit_dates": False, "space_time_join": "since", "validate_kinds": False,
           "summary_version": 1}
    for fmt in (None, 1, 2):
        cfg: dict = {"method": {"_target_": "memeval.methods.gsw.method.GSW", "name": "gsw"}}
        if fmt is not None:
            cfg["run_format"] = fmt
        assert {k: upgrade_config(cfg).method[k] for k in old} == old
    assert not set(old) & set(upgrade_config({"run_format": 3, "method": {"_target_": "memeval.methods.gsw.method.GSW"}}).method)
    shipped = OmegaConf.load(ROOT / "conf/method/gsw.yaml")
    params = inspect.signature(GSW.__init__).parameters
    assert {k: params[k].default for k in old} == {k: shipped[k] for k in old} != old


def test_a_saved_run_chosen_by_id_is_not_read_as_stratified(tmp_path: Path) -> None:
    """Runs made with subset.ids before 2026-12-02 said "stratified by category, seed 0"."""
    for name, ids in (("by_id", ["conv-30-q0", "conv-30-q2"]), ("drawn", None)):
        run = tmp_path / name
        run.mkdir()
        (run / "config.yaml").write_text(OmegaConf.to_yaml({"subset": {"n": 8, "seed": 0, "ids": ids}}))
        label = "2 of 105 (stratified by category, seed 0); each corpus indexed to its first 8 units"
        (run / "meta.json").write_text(json.dumps({"run_format": RUN_FORMAT, "subset": label}))
        got = read_meta(run)["subset"]
        if ids:
            assert got == "2 of 105 chosen by id (subset.ids); each corpus indexed to its first 8 units"
        else:
            assert got == label
