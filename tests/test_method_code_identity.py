"""A method's code is part of what ran (harness/plugin.py): meta.json records the hash of the
plugin's source files for every method, and a method outside methods/ names a new run folder when
its code changes, while a core method's run folder name does not depend on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT, run_cli, scripted_overrides

from memeval.evaluation.runs.folder import config_hash
from memeval.harness.estimate import compose
from memeval.harness.plugin import method_code

PLUGIN = '''from memeval.methods.vanilla import Vanilla


class MyMethod(Vanilla):
    """An out-of-tree plugin: the whole corpus, as Vanilla gives it."""
    VERSION = {version}
'''


def _plugin(folder: Path, version: int, name: str) -> str:
    (folder / f"{name}.py").write_text(PLUGIN.format(version=version))
    return f"{name}.MyMethod"


def test_an_out_of_tree_method_names_a_new_run_folder_when_its_code_changes(tmp_path: Path, monkeypatch) -> None:
    from memeval.harness.build import identity

    monkeypatch.syspath_prepend(str(tmp_path))
    target = _plugin(tmp_path, 1, "plugin_identity_a")
    cfg = compose(["method=vanilla", f"method._target_={target}"])
    first = config_hash(identity(cfg))
    assert config_hash(identity(cfg)) == first  # the same code: the same folder
    _plugin(tmp_path, 2, "plugin_identity_a")  # the plugin is edited
    edited = config_hash(identity(cfg))
    assert edited != first
    _plugin(tmp_path, 1, "plugin_identity_a")
    assert config_hash(identity(cfg)) == first  # its code, not the time it was edited
    code = method_code(target)
    assert code is not None and not code.core and code.files == 1


def test_an_out_of_tree_package_hashes_every_file_of_it(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "plugin_pkg_b"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("K = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    target = "plugin_pkg_b.method.MyMethod"
    (package / "method.py").write_text(PLUGIN.format(version=1))
    before = method_code(target)
    (package / "helpers.py").write_text("K = 2\n")  # a file the method imports, not its module
    after = method_code(target)
    assert before is not None and after is not None and before.files == after.files == 3
    assert before.sha256 != after.sha256


@pytest.mark.parametrize("option", sorted(p.stem for p in (ROOT / "conf" / "method").glob("*.yaml")))
def test_a_core_method_keeps_its_run_name_and_records_its_code(option: str) -> None:
    """Core methods: the code hash never joins the folder name (every saved run keeps its name,
    tests/test_upgrade.py); meta.json's record covers the plugin's own package."""
    from memeval.harness.build import _code_meta, identity

    cfg = compose([f"method={option}"])
    assert "method_code" not in identity(cfg)
    meta = _code_meta(cfg.method)
    assert meta is not None and meta["core"] is True and len(meta["sha256"]) == 64
    module = meta["module"].removeprefix("memeval.").split(".")
    if len(module) > 2:  # a package of its own (methods/gsw/, methods/external/): its files, not its audits
        package = ROOT / "src" / "memeval" / "methods" / module[1]
        files = [f for f in package.rglob("*.py") if "audits" not in f.relative_to(package).parts]
        assert meta["files"] == len(files) > 1
    else:
        assert meta["files"] == 1


def test_meta_records_the_code_and_an_edited_plugin_gets_its_own_folder(scripted, tmp_path: Path,
                                                                         data_dir: Path) -> None:
    """As a user sees it: a run of an out-of-tree plugin, the plugin edited, the same command again."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    args = ["method=vanilla", f"method._target_={_plugin(plugins, 1, 'plugin_run_c')}", "dataset=epbench20",
            "subset.n=1", *scripted_overrides(scripted, tmp_path, data_dir)]
    env = {"PYTHONPATH": f"{plugins}:{ROOT}"}
    first = run_cli(args, env=env)
    assert first.returncode == 0, first.stderr[-2000:]
    _plugin(plugins, 2, "plugin_run_c")
    second = run_cli(args, env=env)
    assert second.returncode == 0, second.stderr[-2000:]
    runs = sorted((tmp_path / "runs" / "epbench20").glob("vanilla-*"))
    assert len(runs) == 2  # the first run's folder is kept, not overwritten
    codes = [json.loads((r / "meta.json").read_text())["method_code"] for r in runs]
    assert all(c["module"] == "plugin_run_c" and c["files"] == 1 and c["core"] is False for c in codes)
    assert codes[0]["sha256"] != codes[1]["sha256"]
    indexes = sorted((tmp_path / "runs" / "_indexes").glob("vanilla-*"))
    assert len(indexes) == 2  # the edited plugin builds its own index, not the old code's
