"""model_access/ keeps its files where MEMEVAL_HOME says and its modules free of import loops."""

from __future__ import annotations

import ast
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "memeval" / "model_access"


def _imports(path: Path) -> set[str]:
    """The model_access modules a file imports, lazy imports and `__main__` blocks included."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level:  # relative: inside model_access
                names = [mod] if mod else [a.name for a in node.names]
                found.update(n.split(".")[0] for n in names)
            elif mod.startswith("memeval.model_access."):
                found.add(mod.split(".")[2])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[2] for a in node.names if a.name.startswith("memeval.model_access."))
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import loop of the graph as a path (first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt, [*path, nxt])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


def test_the_cycle_finder_finds_a_loop() -> None:
    assert _cycle({"cache": {"cache_cli"}, "cache_cli": {"cache_store"}, "cache_store": {"cache"}}) == \
        ["cache", "cache_cli", "cache_store", "cache"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_two_model_access_modules_import_each_other_in_a_loop() -> None:
    graph = {p.stem: _imports(p) - {p.stem} for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert _cycle(graph) is None, f"import loop in model_access/: {' -> '.join(_cycle(graph) or [])}"


def test_the_tokenizer_cache_lives_under_memeval_home(tmp_path, monkeypatch) -> None:
    from memeval.model_access.tokenizer import install_offline_encoding

    monkeypatch.setenv("MEMEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "elsewhere"))  # restored afterwards
    folder = install_offline_encoding()
    assert folder == tmp_path / "home" / "tiktoken"
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and all(p.is_relative_to(tmp_path / "home" / "tiktoken") for p in written)
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(folder)  # where tiktoken reads it
