"""The test suite's scripted OpenAI-compatible server, for the benchmarks that drive the runner
without a model (bench_scale, bench_gsw_scale, soak_kill): imported as a sibling module (a
script's own folder is on its path), loaded from tests/scripted_server.py, which is no package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def scripted_server() -> type:
    """tests/scripted_server.py's ScriptedServer (under pytest, the module conftest imported)."""
    module = sys.modules.get("scripted_server")
    if module is None:
        spec = importlib.util.spec_from_file_location("scripted_server", ROOT / "tests" / "scripted_server.py")
        assert spec is not None and spec.loader is not None
        module = sys.modules["scripted_server"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module.ScriptedServer
