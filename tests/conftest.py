"""Shared fixtures: the benchmark data folder, the scripted server, and a run.py driver."""

from __future__ import annotations

import atexit
import functools
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

from scripted_server import ScriptedServer  # noqa: E402

# Tests never read or write the committed judge calibration (conf/calibration/): a scripted
# judge's rates must not reach the shipped file, and a shipped rate must not change a test's table.
os.environ["MEMEVAL_JUDGE_CALIBRATION"] = str(Path(os.environ.get("TMPDIR", "/tmp")) / f"memeval-test-calibration-{os.getpid()}.json")


def _data_dir() -> Path:
    for candidate in (os.environ.get("MEMEVAL_DATA"), ROOT / "data", ROOT.parent / "shared" / "data"):
        if candidate and (Path(candidate) / "epbench").exists():
            return Path(candidate)
    pytest.skip("no benchmark data: run `python scripts/fetch_data.py`")
    raise AssertionError


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return _data_dir()


@pytest.fixture()
def scripted() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


def scripted_overrides(server: ScriptedServer, tmp: Path, data_dir: Path) -> list[str]:
    """Point the answering model, judge and embedder at the scripted server; isolate all state."""
    url = server.base_url
    return [
        "llm=openai_compatible", f"llm.base_url={url}", "llm.model=scripted-llm",
        "judge=openai_compatible", f"judge.base_url={url}", "judge.model=scripted-judge",
        "embedder=openai_compatible", f"embedder.base_url={url}", "embedder.model=hashed-bow",
        "tracking=none", f"data_dir={data_dir}", f"output_root={tmp / 'runs'}",
        f"cache_path={tmp / 'cache.sqlite'}",
    ]


def run_cli(args: list[str], env: dict[str, str] | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "HYDRA_FULL_ERROR": "0", **(env or {})}
    return subprocess.run([sys.executable, str(ROOT / "run.py"), *args], capture_output=True, text=True,
                          cwd=ROOT, env=full_env, timeout=timeout)


def bundled_run(bundle: str, method: str) -> Path:
    """The run folder of `method` in a shipped bundle (results/BUNDLE)."""
    return next((ROOT / "results" / bundle / "runs").glob(f"*/{method}-*"))


def bundled_question(bundle: str, method: str, qid: str) -> tuple[dict, dict]:
    """(prediction, judgment) of one question in a shipped bundle's run folder (results/BUNDLE)."""
    return run_question(bundled_run(bundle, method), qid)


def run_question(run: Path, qid: str) -> tuple[dict, dict]:
    """(prediction, judgment) of one question of a run folder."""
    from memeval.evaluation.runs.folder import read_jsonl_file

    pred = next(p for p in read_jsonl_file(run / "predictions.jsonl") if p["question_id"] == qid)
    judged = next(j for j in read_jsonl_file(run / "judgments.jsonl") if j["question_id"] == qid)
    return pred, judged


# The v1 bundles (results/epbench20-local and results/locomo-local as first shipped: the 0.5B model's
# runs) are replaced by v2 bundles of the same names; the tests built on their stored replies, old
# run formats and indexes read extracts of them instead (tests/fixtures/v1_bundles/README.md).
V1_FIXTURES = ROOT / "tests" / "fixtures" / "v1_bundles"


@functools.cache
def _v1_scratch() -> Path:
    scratch = Path(tempfile.mkdtemp(prefix="memeval-v1-bundles-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    return scratch


@functools.cache
def v1_bundle(name: str) -> Path:
    """The v1 bundle `name` (epbench20-local or locomo-local) as its extract in
    tests/fixtures/v1_bundles holds it, copied once per session into a scratch folder with each
    packed NAME.xz unpacked to NAME: the bundle's own files, byte for byte, in the bundle's layout
    (BUNDLE/manifest.json, runs/, indexes/, calls.jsonl.gz), and a test that writes never touches
    the fixtures."""
    src = V1_FIXTURES / name
    if not src.is_dir():
        raise FileNotFoundError(f"no v1 bundle extract {src}")
    dst = _v1_scratch() / name
    for f in sorted(src.rglob("*")):
        if not f.is_file():
            continue
        out = dst / f.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        if f.suffix == ".xz":
            out.with_suffix("").write_bytes(lzma.decompress(f.read_bytes()))
        else:
            shutil.copyfile(f, out)
    return dst


def v1_run(bundle: str, method: str) -> Path:
    """The run folder of `method` in a v1 bundle (its extract, see v1_bundle)."""
    return next((v1_bundle(bundle) / "runs").glob(f"*/{method}-*"))


def v1_question(bundle: str, method: str, qid: str) -> tuple[dict, dict]:
    """(prediction, judgment) of one question of a v1 bundle's run folder (its extract)."""
    return run_question(v1_run(bundle, method), qid)


def judged_questions(run: Path, with_gold: bool) -> list[tuple[dict, dict]]:
    """(prediction, judgment) of every judged question of a run folder with gold items (or,
    `with_gold` False, with none)."""
    from memeval.evaluation.runs.folder import read_jsonl_file

    preds = {p["question_id"]: p for p in read_jsonl_file(run / "predictions.jsonl")}
    return [(preds[j["question_id"]], j) for j in read_jsonl_file(run / "judgments.jsonl")
            if bool(j["gold"]) == with_gold and "judge_error" not in j]


def streamed_cuts(rule: str, reply: str, seeds: int = 5) -> list[str]:
    """A repeat-stop rule's cut of `reply` fed as a stream in random pieces (1-9 characters), one
    text per seed: each must equal the whole reply's cut (the rule is a pure function of the text)."""
    import random

    from memeval.model_access.repeat_stop import scanner_for

    out = []
    for seed in range(seeds):
        scanner, rng, i = scanner_for(rule), random.Random(seed), 0
        while i < len(reply) and scanner.cut is None:
            n = rng.randint(1, 9)
            scanner.feed(reply[i:i + n])
            i += n
        cut = scanner.finish()
        out.append(cut.text if cut is not None else reply)
    return out
