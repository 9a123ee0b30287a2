"""The core names no method and no dataset: each plugin owns what is particular to it.

A method, dataset or benchmark family is found through the plugin registry (memeval.plugins) or
a run's config `_target_`, and declares its own metadata (its licence, its label set, its
judge-matrix adapter, ...). So this test reads the code of the core (AST: identifiers, attribute
names, imported module names, and string constants other than docstrings; comments are not code)
for the built-in plugins' names, case-insensitive, as word parts (`EpBenchLoader`, `locomo10`,
`hipporag2`, `seem_paper`; not `seems`). There is no exception list: each hit is printed as
`file:line name`.

The core is every module of memeval but the plugins' own: a registered plugin's module, and its
whole package where the package holds nothing else (methods/gsw/, evaluation/epbench/), plus the
plugin folders no entry point names: methods/external/workers/ (each runs one package in its own
environment) and datasets/published/ (readers of LoCoMo's published answer sets).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from memeval.plugins import registered

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "memeval"
NAMES = ("gsw", "seem", "graphrag", "hipporag", "lightrag", "mem0", "graphiti", "cognee", "vanilla",
         "embedding_rag", "bm25", "epbench", "locomo", "longmemeval")
# packages that hold several plugins' modules beside shared ones: a plugin there owns its module only
SHARED_PACKAGES = {"memeval", "memeval.methods", "memeval.methods.external", "memeval.datasets",
                   "memeval.evaluation"}
UNNAMED_PLUGIN_FOLDERS = ("methods/external/workers", "datasets/published")
_WORD = re.compile(r"[A-Za-z0-9_]+")


def plugin_paths() -> set[Path]:
    """Files and folders of the built-in plugins (the registry's, as a third party's would be)."""
    found = {PACKAGE / rel for rel in UNNAMED_PLUGIN_FOLDERS}
    for kind in ("method", "dataset", "protocol"):
        for plugin in registered(kind).values():
            if not plugin.builtin:
                continue
            module = plugin.module
            parent = module.rsplit(".", 1)[0]
            if parent in SHARED_PACKAGES:
                found.add(SRC / (module.replace(".", "/") + ".py"))
            else:
                found.add(SRC / parent.replace(".", "/"))
    return found


def core_modules() -> list[Path]:
    plugins = plugin_paths()
    return [p for p in sorted(PACKAGE.rglob("*.py"))
            if not any(p == q or q in p.parents for q in plugins)]


def _bounded(word: str, i: int, j: int) -> bool:
    """Whether word[i:j] is a word part: bounded by the word's ends, `_`, a digit after a letter or a
    change to upper case."""
    def edge(a: str, b: str) -> bool:  # a then b, across the match's edge (`bm25s` is not `bm25`)
        return (not (a.isalnum() and b.isalnum()) or (a.isalpha() and b.isdigit())
                or (not a.isupper() and b.isupper()))
    return (i == 0 or edge(word[i - 1], word[i])) and (j == len(word) or edge(word[j - 1], word[j]))


def names_in(text: str) -> list[str]:
    """The plugin names in a text, as word parts, each as written."""
    hits = []
    for word in _WORD.findall(text):
        low = word.lower()
        for name in NAMES:
            start = low.find(name)
            while start >= 0:
                if _bounded(word, start, start + len(name)):
                    hits.append(word)
                    break
                start = low.find(name, start + 1)
    return hits


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str)}


def _texts(node: ast.AST, docstrings: set[int]) -> list[str]:
    """What of one node is code that could name a plugin."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) and id(node) not in docstrings else []
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    if isinstance(node, ast.alias):
        return [node.name, node.asname or ""]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword):
        return [node.arg or ""]
    return []


def scan(path: Path, root: Path = SRC) -> list[str]:
    """`file:line name` for every plugin name in the module's code."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    rel = path.relative_to(root) if path.is_relative_to(root) else path
    hits: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        line = int(getattr(node, "lineno", 0) or 0)
        hits |= {(line, name) for text in _texts(node, docstrings) for name in names_in(text)}
    return [f"{rel}:{line} {name}" for line, name in sorted(hits)]


def test_the_core_names_no_method_and_no_dataset() -> None:
    hits = [hit for path in core_modules() for hit in scan(path)]
    assert not hits, f"{len(hits)} method or dataset names in the core:\n" + "\n".join(hits)


def test_the_scan_catches_a_planted_name(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(
        '"""A docstring may say LoCoMo and GSW."""\n'
        "from memeval.evaluation.epbench import judge_check  # a comment may say vanilla\n"
        "import memeval.methods.graphrag as g\n"
        "\n"
        "\n"
        "def check(dataset: str, hipporag2_cfg: int = 0) -> bool:\n"
        '    """It seems fine: \'seems\' is not a name."""\n'
        '    return dataset == "longmemeval_oracle" or g.Mem0Method(x=f"{dataset}/bm25")\n'
        "\n"
        "\n"
        "class EpBenchLoaderLike:\n"
        "    seem_paper = 'the word seems, and seemingly, are not names'\n",
        encoding="utf-8")
    hits = scan(planted, tmp_path)
    assert hits == ["planted.py:2 epbench", "planted.py:3 graphrag",
                    "planted.py:6 hipporag2_cfg", "planted.py:8 Mem0Method", "planted.py:8 bm25",
                    "planted.py:8 longmemeval_oracle", "planted.py:11 EpBenchLoaderLike",
                    "planted.py:12 seem_paper"]


def test_the_core_holds_the_shared_modules_and_no_plugin() -> None:
    core = {p.relative_to(PACKAGE).as_posix() for p in core_modules()}
    assert {"plugins.py", "paths.py", "methods/base.py", "datasets/types.py", "evaluation/protocol.py",
            "evaluation/judge_matrix/matrix.py", "cli/judge_check.py", "harness/pipeline.py"} <= core
    assert not {p for p in core if p.startswith(("evaluation/epbench/", "evaluation/conversations/",
                                                  "methods/gsw/", "methods/seem/", "datasets/published/"))}
    assert not {"evaluation/custom.py", "datasets/locomo.py", "methods/vanilla.py"} & core
