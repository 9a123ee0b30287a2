"""Dry-run recorder for cost estimates: every uncached call is counted with o200k and answered
with a placeholder, so the method code builds its real prompts while nothing is sent or cached.

Calls whose prompts do not depend on earlier replies (chapter-level index calls, answer prompts
built from the retrieved context, judge prompts) are counted exactly. Calls that do depend on
replies see placeholders instead: free text of the predicted output length, and for structured
output an object that satisfies the JSON schema with `json_items` entries per list, its strings
drawn from the names in the prompt (a reply in a text layout, model_access.text_format: that
object written in the layout). Calls fed by structured replies (GSW's Reconciler and entity
summaries) are therefore modelled, not known; the size of that error is measured against
scripted-server runs in tests/test_estimate.py and stated in the README.
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .tokenizer import count_tokens, get_encoding
from .usage import current_stage

PREFIX_MIN = 1024  # OpenAI's prompt caching: prefixes of at least 1024 tokens ...
PREFIX_STEP = 128  # ... growing in 128-token steps are billed at the cached-input price


def schema_instance(schema: dict[str, Any], root: dict[str, Any] | None = None,
                    words: list[str] | None = None, items: int = 0, _n: list[int] | None = None) -> Any:
    """A value valid under a pydantic JSON schema (refs, anyOf, enums, min/maxItems).

    `items` list entries per array (clipped to the schema's bounds) and strings drawn in turn
    from `words` give a typical reply; the defaults give the smallest valid one.
    """
    root = root or schema
    n = _n if _n is not None else [0]
    again = lambda sub: schema_instance(sub, root, words, items, n)  # noqa: E731
    if "$ref" in schema:
        return again(root.get("$defs", {})[schema["$ref"].rsplit("/", 1)[-1]])
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for alt in ("anyOf", "oneOf", "allOf"):
        if alt in schema:
            options = [s for s in schema[alt] if s.get("type") != "null"] or schema[alt]
            return again(options[0])
    kind = schema.get("type", "object")
    if kind == "object":
        props = schema.get("properties", {})
        keep = props if items else {k: v for k, v in props.items() if k in schema.get("required", [])}
        return {k: again(v) for k, v in keep.items()}
    if kind == "array":
        lo, hi = int(schema.get("minItems", 0)), schema.get("maxItems")
        count = max(lo, min(items, hi) if hi is not None else items)
        return [again(schema.get("items", {})) for _ in range(count)]
    if kind == "string":
        n[0] += 1
        text = words[n[0] % len(words)] if words else "x"
        text = text[: schema["maxLength"]] if "maxLength" in schema else text
        return text.ljust(int(schema.get("minLength", 1)), "x")
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None


def _names(text: str) -> list[str]:
    """Capitalised word pairs and words of a prompt: what a model's JSON reply would name."""
    found = re.findall(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)?\b", text)
    return list(dict.fromkeys(found)) or ["item"]


@dataclass
class CallRecord:
    stage: str
    model: str
    prompt_tokens: int
    output_tokens: int
    cached: bool  # already in the model-call cache: costs nothing now
    prefix_cached_tokens: int = 0  # billed at the cached-input price (provider prompt caching)
    max_tokens: int = 0
    # a prior's share for this call's reply layout (TextFormat.tokens_vs_json): the output prior
    # is calibrated on JSON replies; a measured ratio (real replies of the stage) is used unscaled
    output_scale: float = 1.0


@dataclass
class DryRecorder:
    """Shared by the llm, judge and embedder of one estimate; thread-safe."""

    output_ratio: dict[str, float]
    default_ratio: float = 0.25
    json_items: int = 2  # entries per list in placeholder JSON replies (see schema_instance)
    records: list[CallRecord] = field(default_factory=list)
    _prefixes: dict[str, set[str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def ratio(self, stage: str) -> float:
        return float(self.output_ratio.get(stage, self.default_ratio))

    def _prefix_cached(self, model: str, messages: list[dict[str, str]]) -> int:
        """Tokens of this prompt's longest prefix already sent (>= 1024, in 128-token steps)."""
        ids = get_encoding().encode("".join(f"<{m.get('role')}>{m.get('content', '')}" for m in messages),
                                    disallowed_special=())
        h = hashlib.sha1()
        hashes: list[tuple[int, str]] = []
        pos = 0
        for end in range(PREFIX_MIN, len(ids) + 1, PREFIX_STEP):
            h.update(np.asarray(ids[pos:end], dtype=np.int64).tobytes())
            pos = end
            hashes.append((end, h.copy().hexdigest()))
        with self._lock:
            seen = self._prefixes.setdefault(model, set())
            hit = max((end for end, d in hashes if d in seen), default=0)
            seen.update(d for _, d in hashes)
        return hit

    def chat(self, client: Any, req: dict[str, Any], text_format: Any = None) -> Any:
        """Count one uncached chat call and return a placeholder reply of the predicted length
        (`text_format`: the reply's layout, for a placeholder the caller can decode)."""
        from .budget import prompt_tokens_of
        from .chat import ChatResult

        stage = current_stage()
        pt = prompt_tokens_of(req["messages"])
        fmt = req.get("response_format") or {}
        scale = text_format.tokens_vs_json if text_format is not None and text_format.tokens_vs_json else 1.0
        out = round(self.ratio(stage) * req["max_tokens"] * scale)  # scale: the same content, fewer tokens
        last = str(req["messages"][-1].get("content", ""))
        if text_format is not None:
            model = text_format.model
            text = text_format.encode(model.model_validate(schema_instance(
                model.model_json_schema(), words=_names(last), items=self.json_items)))
        elif fmt.get("type") == "json_schema":
            text = _json(schema_instance(fmt["json_schema"]["schema"], words=_names(last),
                                         items=self.json_items))
        elif fmt.get("type") == "json_object":
            text = "{}"
        else:  # echo the end of the request (where the material is), as long as the predicted reply
            enc = get_encoding()
            text = enc.decode(enc.encode(last, disallowed_special=())[-max(1, out):])
        rec = CallRecord(stage, client.display_name, pt, out, False,
                         self._prefix_cached(client.display_name, req["messages"]), req["max_tokens"], scale)
        with self._lock:
            self.records.append(rec)
        client.ledger.record(client.display_name, pt, out, cached=False)
        return ChatResult(text, pt, out, False, client.display_name)

    def hit(self, client: Any, req: dict[str, Any], value: dict[str, Any]) -> None:
        """A cached call: free now, but it measures the output ratio and warms the prefix cache."""
        self._prefix_cached(client.display_name, req["messages"])
        with self._lock:
            self.records.append(CallRecord(current_stage(), client.display_name,
                                           int(value.get("prompt_tokens", 0)),
                                           int(value.get("completion_tokens", 0)), True, 0,
                                           int(req.get("max_tokens") or 0)))

    def embed(self, client: Any, texts: list[str], dim: int | None,
              keys: list[str] | None = None) -> list[np.ndarray]:
        """Count one uncached embedding batch; return deterministic unit vectors (hashed words)."""
        tokens = sum(count_tokens(t) for t in texts)
        with self._lock:
            self.records.append(CallRecord(current_stage(), client.display_name, tokens, 0, False))
        client.ledger.record(client.display_name, tokens, 0, cached=False)
        d = dim or 256
        out = []
        for t in texts:
            v = np.zeros(d, dtype=np.float32)
            for tok in re.findall(r"\w+", t.lower()):
                v[int(hashlib.md5(tok.encode()).hexdigest()[:8], 16) % d] += 1.0
            v[0] += 1e-3
            out.append(v / np.linalg.norm(v))
        return out


def _json(value: Any) -> str:
    import json

    return json.dumps(value)
