"""The import graph of every package is one-way and has no loops (ARCHITECTURE.md, "Layering").

Every import in every module, lazy ones inside functions included, is read from the source (AST),
so a forbidden import or an import loop fails here even on a code path no other test runs.
There is no exception list: a module's layer is its package's (LAYERS), and an entry point
nothing imports sits on the top layer by definition: `memeval/__main__.py` (`python -m memeval`)
and every module of an `audits` package (`memeval audit NAME`, registered in pyproject.toml
beside what it audits, so a method's audit may read run folders through evaluation/).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src"
PACKAGES = ("memeval.model_access", "memeval.datasets", "memeval.methods", "memeval.evaluation",
            "memeval.harness", "memeval.cli")
# lower number = lower layer; a module may import only its own layer or lower ones
LAYERS = {
    "memeval": 0, "memeval.paths": 0, "memeval.settings_history": 0,  # the namespace's docstring and where the checkout's folders are
    "memeval.model_access": 0,
    "memeval.datasets": 1,
    "memeval.methods": 2,
    "memeval.evaluation": 2,  # the package's __init__ (a docstring) and the shared modules below
    "memeval.evaluation.protocol": 2, "memeval.evaluation.presentation": 2, "memeval.evaluation.stats": 2, "memeval.evaluation.agreement": 2,
    "memeval.evaluation.answer_text": 2, "memeval.evaluation.retrieval_diagnostics": 2, "memeval.evaluation.labels": 2,
    "memeval.evaluation.epbench": 3, "memeval.evaluation.conversations": 3, "memeval.evaluation.custom": 3,
    "memeval.evaluation.runs": 4,
    # what reads run folders only: the report, compare, rescore, the bundle formats
    "memeval.evaluation.report": 5, "memeval.evaluation.compare": 5, "memeval.evaluation.rescore": 5, "memeval.evaluation.bundle": 5,
    "memeval.evaluation.label_check": 5,  # credits of judged run folders against hand labels
    "memeval.evaluation.explore": 5,  # the results explorer: reads run folders only, like the report
    "memeval.evaluation.health": 5,  # run health: reads run folders; the index counters come as plain data
    "memeval.evaluation.judge_matrix": 5,  # re-judges run folders (no harness)
    "memeval.harness": 6,
    "memeval.cli": 7,
}
TOP = max(LAYERS.values())
# pairs that share only lower layers: the plugins never judge, the benchmark families stay apart
# (evaluation.custom combines both families)
SEPARATE = (("memeval.methods", "memeval.evaluation"), ("memeval.evaluation", "memeval.methods"),
            ("memeval.evaluation.epbench", "memeval.evaluation.conversations"),
            ("memeval.evaluation.conversations", "memeval.evaluation.epbench"))


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of PACKAGES under root, by dotted name."""
    found = {module_name(p, root): p for pkg in PACKAGES for p in sorted((root / pkg.replace(".", "/")).rglob("*.py"))}
    return found | {module_name(p, root): p for p in sorted((root / "memeval").glob("*.py"))}


def imports_in(src: str, name: str, is_package: bool = False) -> list[tuple[str, list[str]]]:
    """Every import statement of module `name`'s source as (absolute module, names it takes):
    `import a.b` is ("a.b", []), `from ..x import y` ("<package above>.x", ["y"])."""
    package = name.split(".") if is_package else name.split(".")[:-1]
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            found.append((".".join([*base, *(node.module.split(".") if node.module else [])]),
                          [a.name for a in node.names]))
    return found


def resolve(statements: Iterable[tuple[str, list[str]]], known: Iterable[str]) -> set[str]:
    """The known modules these imports load: `from a import b` is a.b when that is a module
    (`from . import figures`), else a; any other name, its longest known prefix. Parent packages
    are not added: importing a.b.c runs a/__init__.py, but the dependency stated is on a.b.c."""
    known = set(known)

    def owner(name: str) -> str | None:
        parts = name.split(".")
        return next((".".join(parts[:i]) for i in range(len(parts), 0, -1) if ".".join(parts[:i]) in known), None)

    out: set[str] = set()
    for module, names in statements:
        subs = {f"{module}.{n}" for n in names if f"{module}.{n}" in known}
        out |= subs
        if len(subs) < len(names) or not names:  # a name in the module itself (or a plain import)
            found = owner(module)
            if found is not None:
                out.add(found)
    return out


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the modules of PACKAGES it imports (itself left out)."""
    mods = modules(root)
    return {name: resolve(imports_in(path.read_text(encoding="utf-8"), name, path.name == "__init__.py"),
                          mods) - {name} for name, path in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return sorted(found)


def entry_point(name: str) -> bool:
    """`python -m` or `memeval audit` runs it; no module imports it."""
    parts = name.split(".")
    return parts[-1] == "__main__" or "audits" in parts[:-1]


def layer(name: str) -> int | None:
    if entry_point(name):
        return TOP
    owners = [p for p in LAYERS if name == p or name.startswith(p + ".")]
    return LAYERS[max(owners, key=len)] if owners else None


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def violations(name: str, imported: set[str]) -> list[str]:
    own = layer(name)
    assert own is not None, name
    out = [f"{name} (layer {own}) imports {t} (layer {layer(t)})"
           for t in sorted(imported) if (layer(t) or 0) > own]
    out += [f"{name} imports the entry point {t}" for t in sorted(imported) if entry_point(t)]
    for a, b in SEPARATE:
        if _within(name, a) and not _within(name, b) and not entry_point(name):
            out += [f"{name} imports {t}: {a} and {b} share only lower layers"
                    for t in sorted(imported) if _within(t, b) and not _within(t, a)]
    return out


def test_every_module_has_a_layer() -> None:
    unplaced = [name for name in modules() if layer(name) is None]
    assert not unplaced, f"give these modules a layer in tests/test_layering.py: {unplaced}"
    assert {".".join(name.split(".")[:2]) for name in modules() if name.count(".")} >= set(PACKAGES)


def test_no_module_imports_a_higher_layer() -> None:
    bad = [v for name, imported in graph().items() for v in violations(name, imported)]
    assert not bad, "imports against the layering (ARCHITECTURE.md):\n" + "\n".join(bad)


def test_no_import_cycles() -> None:
    """No set of modules imports each other in a loop (lazy imports count)."""
    found = cycles(graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_scan_catches_a_forbidden_import() -> None:
    """Lazy imports inside a function count, relative ones too."""
    src = ("def f():\n    from memeval.harness.pipeline import run\n    from ..report import build_report\n"
           "    from ..conversations.locomo import Verdict\n    import memeval.cli.main\n"
           "    from memeval.methods.base import MemoryMethod\n")
    name = "memeval.evaluation.epbench.probe"
    known = {"memeval.harness.pipeline", "memeval.evaluation.report", "memeval.evaluation.conversations.locomo", "memeval.cli.main",
             "memeval.methods.base"}
    found = resolve(imports_in(src, name), known)
    assert found == known
    assert len(violations(name, found)) >= 5
    assert violations("memeval.cli.probe", found - {"memeval.evaluation.conversations.locomo", "memeval.methods.base"}) == []
    assert violations("memeval.harness.probe", {"memeval.evaluation.report"}) == []  # the runner may use the report
    assert violations("memeval.harness.probe", {"memeval.cli.main"})  # but never a command
    assert violations("memeval.cli.probe", {"memeval.__main__"})  # nothing imports an entry point
    assert violations("memeval.cli.probe", {"memeval.methods.gsw.audits.entities"})  # an audit neither
    assert violations("memeval.__main__", {"memeval.cli.main"}) == []  # an entry point may call cli
    assert violations("memeval.methods.seem.audits.passages", {"memeval.evaluation.runs.folder"}) == []
    assert violations("memeval.methods.seem.frames", {"memeval.evaluation.runs.folder"})  # the method itself may not


def test_the_cycle_finder_catches_a_hand_made_cycle(tmp_path: Path) -> None:
    """Three modules of a fake tree import each other in a loop, one lazily and one relatively;
    a fourth imports into the loop without closing it."""
    pkg = tmp_path / "memeval" / "harness"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""Fake."""\n')
    (pkg / "a.py").write_text("from memeval.harness.b import thing\n")
    (pkg / "b.py").write_text("def thing():\n    from . import c\n")
    (pkg / "c.py").write_text("import memeval.harness.a\n")
    (pkg / "d.py").write_text("from .a import thing\n")
    edges = graph(tmp_path)
    assert cycles(edges) == [["memeval.harness.a", "memeval.harness.b", "memeval.harness.c"]]
    edges["memeval.harness.c"].discard("memeval.harness.a")
    assert cycles(edges) == []

