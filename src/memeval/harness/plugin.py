"""What the harness knows of a method plugin beyond its config: the parameters its class takes,
and the hash of its source files.

A typo'd parameter (`+method.top_kk=3`) is refused before any stage with the method's parameters
listed, instead of a TypeError after the run folder is made. The source hash is part of what ran:
meta.json records it for every method (`method_code`), and the run folder name hashes it for a
method outside the core (a class whose module is not under this repository's methods/), whose
code memeval's commit (also in meta.json) does not pin: an edited plugin then names a new run
folder instead of overwriting the last one. Core methods stay out of the name, so every saved
run keeps its folder (tests/test_upgrade.py rebuilds the bundled runs' names).
"""

from __future__ import annotations

import difflib
import hashlib
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CORE = Path(__file__).resolve().parents[1] / "methods"  # the core methods' package
NOT_PARAMETERS = ("services",)  # what the harness passes itself


def method_class(target: str) -> type:
    """The class a method config's `_target_` names (ImportError, AttributeError or ValueError)."""
    from hydra.utils import get_class

    return get_class(target)


def constructor_params(cls: type) -> tuple[list[inspect.Parameter], bool]:
    """(parameters, open): the keyword parameters the class's constructor takes, following
    `**kwargs` up its bases (the baselines hand theirs to ExternalMethod), first declaration of a
    name wins; `open` when the chain ends in `object` with `**kwargs` still open (any name goes)."""
    found: list[inspect.Parameter] = []
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        if klass is object:
            return found, True
        params = list(inspect.signature(init).parameters.values())[1:]
        seen = {f.name for f in found}
        found += [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                  and p.name not in seen and p.name not in NOT_PARAMETERS]
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            return found, False
    return found, True


def accepted_params(cls: type) -> list[str] | None:
    """The keyword parameters the class's constructor takes; None when the chain ends open."""
    params, is_open = constructor_params(cls)
    return None if is_open else [p.name for p in params]


def unknown_param_message(method: str, cls: type, keys: list[str]) -> str | None:
    """One line naming the first key the class does not take, its parameters and the nearest one."""
    accepted = accepted_params(cls)
    if accepted is None:
        return None
    unknown = [k for k in keys if not k.startswith("_") and k not in accepted]
    if not unknown:
        return None
    key = unknown[0]
    near = difflib.get_close_matches(key, accepted, n=1)
    hint = f" (did you mean {near[0]}?)" if near else ""
    return f"method {method} has no parameter '{key}'; its parameters: {', '.join(accepted)}{hint}"


def check_params(method_cfg: Any) -> str | None:
    """The composed method config checked against its class (None: fine). A class that cannot be
    imported is named here too, before any run folder exists."""
    target = str(method_cfg.get("_target_") or "")
    name = str(method_cfg.get("name") or target)
    try:
        cls = method_class(target)
    except (ImportError, AttributeError, ValueError) as exc:
        return f"method {name}: cannot import its class {target!r} ({type(exc).__name__}: {exc})"
    return unknown_param_message(name, cls, [str(k) for k in method_cfg])


@dataclass(frozen=True)
class MethodCode:
    module: str  # the class's module
    files: int  # source files hashed
    sha256: str  # of their relative paths and contents
    core: bool  # under this repository's methods/

    def meta(self) -> dict[str, Any]:
        return {"module": self.module, "files": self.files, "sha256": self.sha256, "core": self.core}


def source_files(module_file: Path) -> tuple[Path, list[Path]]:
    """(root, files): the module alone, or every .py file of the package it lives in: a package
    of its own under methods/ (methods/gsw/; its `audits/`, commands that read saved runs, left out) for a
    core method, the module's folder when it holds
    an __init__.py for any other."""
    path = module_file.resolve()
    if path.is_relative_to(CORE):
        parts = path.relative_to(CORE).parts
        if len(parts) == 1:
            return CORE, [path]
        package = CORE / parts[0]
        return CORE, sorted(f for f in package.rglob("*.py") if "audits" not in f.relative_to(package).parts)
    if (path.parent / "__init__.py").is_file():
        return path.parent.parent, sorted(path.parent.rglob("*.py"))
    return path.parent, [path]


def _module_file(target: str) -> tuple[str, Path] | None:
    try:
        cls = method_class(target)
    except (ImportError, AttributeError, ValueError):
        return None
    file = getattr(sys.modules.get(cls.__module__), "__file__", None)
    return (cls.__module__, Path(file)) if file else None


def outside_core_code(target: str) -> str | None:
    """The source hash the run identity joins: a method outside methods/ only (None for a core one)."""
    found = _module_file(target)
    if found is None or found[1].resolve().is_relative_to(CORE):
        return None
    code = method_code(target)
    return code.sha256 if code is not None else None


def method_code(target: str) -> MethodCode | None:
    """The hash of the source files of the class `target` names, read from disk now (None: the
    class cannot be imported, or its module has no file)."""
    found = _module_file(target)
    if found is None:
        return None
    module, file = found
    root, files = source_files(file)
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(f.read_bytes()).digest())
    return MethodCode(module, len(files), digest.hexdigest(), file.resolve().is_relative_to(CORE))
