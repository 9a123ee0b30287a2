"""The import layering of evaluation/ and harness/ is one-way (ARCHITECTURE.md, "Layering").

Every import in every module, lazy ones inside functions included, is read from the source (AST),
so a forbidden import fails here even on a code path no other test runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# the `python -m evaluation.X` entry points (a module, or a whole package such as evaluation.bundle):
# the top layer, which alone may use the runner (its config, its pipeline)
COMMANDS = {"evaluation.compare", "evaluation.rescore", "evaluation.judge_check",
            "evaluation.conversation_judge_check", "evaluation.report.__main__", "evaluation.bundle"}
# lower number = lower layer; a module may import only its own layer or lower ones
LAYERS = {
    "evaluation.protocol": 0, "evaluation.presentation": 0, "evaluation.stats": 0, "evaluation.agreement": 0,
    "evaluation.answer_text": 0, "evaluation.retrieval_diagnostics": 0, "evaluation.labels": 0,
    "evaluation.epbench": 1, "evaluation.conversations": 1, "evaluation.custom": 1,
    "evaluation.runs": 2,
    "evaluation.report": 3,
    "harness": 4,
}
COMMAND_LAYER = 5
FAMILIES = (("evaluation.epbench", "evaluation.conversations"),
            ("evaluation.conversations", "evaluation.epbench"))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_in(src: str, name: str, is_package: bool = False) -> set[str]:
    """Absolute names of every module the source of module `name` imports (relative ones resolved)."""
    package = name.split(".") if is_package else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            mod = ".".join([*base, *(node.module.split(".") if node.module else [])])
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)  # `from . import figures`
    return found


def imports(path: Path) -> set[str]:
    return imports_in(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")


def is_command(name: str) -> bool:
    return any(name == c or name.startswith(c + ".") for c in COMMANDS)


def layer(name: str) -> int | None:
    if is_command(name):
        return COMMAND_LAYER
    if name == "evaluation":  # the package's __init__ (a docstring): below everything
        return 0
    owners = [p for p in LAYERS if name == p or name.startswith(p + ".")]
    return LAYERS[max(owners, key=len)] if owners else None


def modules() -> list[Path]:
    return sorted([*(ROOT / "evaluation").rglob("*.py"), *(ROOT / "harness").glob("*.py")])


def test_every_module_has_a_layer() -> None:
    unplaced = [module_name(p) for p in modules() if layer(module_name(p)) is None]
    assert not unplaced, f"give these modules a layer in tests/test_layering.py: {unplaced}"


def violations(name: str, imported: set[str]) -> list[str]:
    own = layer(name)
    assert own is not None, name
    out = [f"{name} (layer {own}) imports {t} (layer {layer(t)})"
           for t in sorted(imported) if (layer(t) or 0) > own]
    for a, b in FAMILIES:  # the benchmark families share only lower layers (custom combines them)
        if name.startswith(a + ".") or name == a:
            out += [f"{name} imports the other family's {t}" for t in sorted(imported)
                    if t == b or t.startswith(b + ".")]
    return out


def test_no_module_imports_a_higher_layer() -> None:
    bad = [v for path in modules() for v in violations(module_name(path), imports(path))]
    assert not bad, "imports against the layering (ARCHITECTURE.md):\n" + "\n".join(bad)


def test_only_the_commands_import_harness() -> None:
    users = {module_name(p) for p in modules()
             if p.is_relative_to(ROOT / "evaluation") and any(layer(t) == LAYERS["harness"] for t in imports(p))}
    others = sorted(u for u in users if not is_command(u))
    assert not others, f"evaluation modules that import harness: {others}"


def test_the_scan_catches_a_forbidden_import() -> None:
    """Lazy imports inside a function count, relative ones too."""
    src = ("def f():\n    from harness.pipeline import run\n    from ..report import build_report\n"
           "    from ..conversations.locomo import Verdict\n")
    name = "evaluation.epbench.probe"
    found = imports_in(src, name)
    assert {"harness.pipeline", "evaluation.report", "evaluation.conversations.locomo"} <= found
    assert len(violations(name, found)) >= 3
    assert violations("harness.probe", found) == []  # the runner may use the report


def test_run_folders_saved_under_old_protocol_paths_still_load_and_keep_their_names(tmp_path: Path) -> None:
    """config.yaml of an old run names e.g. evaluation.epbench.EpBenchProtocol: rescore still
    instantiates it, and today's config hashes to the same run folder name as then."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from evaluation.runs.folder import RunFolder, config_hash
    from evaluation.runs.scoring import LEGACY_TARGETS, load_protocol
    from harness.build import identity
    from harness.resolvers import register_resolvers
    from harness.schema import register_schemas

    register_resolvers()
    register_schemas()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        for dataset in ("epbench20", "locomo", "longmemeval_s"):
            cfg = compose("config", overrides=[f"dataset={dataset}", "data_dir=data"])
            new = cfg.dataset.protocol._target_
            old = next(o for o, n in LEGACY_TARGETS.items() if n == new)
            hashed = config_hash(identity(cfg))
            cfg.dataset.protocol._target_ = old
            assert config_hash(identity(cfg)) == hashed
            folder = RunFolder(tmp_path / dataset)
            (folder / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(
                {"dataset": {"protocol": OmegaConf.to_container(cfg.dataset.protocol, resolve=True)}})))
            assert f"{type(load_protocol(folder)).__module__}.{type(load_protocol(folder)).__name__}" == new
