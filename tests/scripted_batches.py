"""The OpenAI Batch API on the scripted server: /v1/files (upload, content) and /v1/batches.

A batch is answered line by line with the server's chat rules when it is first polled, unless
`server.batch_hold` is set (then it stays in_progress: a test can kill the client meanwhile).
Each answered line is logged as a request on path "batch:/v1/chat/completions".
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any


def _state(server: Any) -> dict[str, Any]:
    if not hasattr(server, "batch_state"):
        server.batch_state = {"files": {}, "batches": {}}
        server.batch_hold = getattr(server, "batch_hold", False)
    return server.batch_state


def _multipart_file(handler: Any, raw: bytes) -> bytes:
    boundary = re.search(r"boundary=([^;]+)", handler.headers["Content-Type"]).group(1).strip('"')
    for part in raw.split(b"--" + boundary.encode()):
        head, _, body = part.partition(b"\r\n\r\n")
        if b'name="file"' in head:
            return body.rsplit(b"\r\n", 1)[0]
    raise ValueError("no file part in the upload")


def post(server: Any, handler: Any, raw: bytes) -> None:
    st = _state(server)
    with server.lock:
        server.requests.append({"path": handler.path, "body": {}})
    if handler.path.endswith("/files"):
        fid = f"file-{uuid.uuid4().hex[:12]}"
        st["files"][fid] = _multipart_file(handler, raw)
        return handler._send(200, {"id": fid, "object": "file", "bytes": len(st["files"][fid]),
                                   "created_at": 0, "filename": "batch.jsonl", "purpose": "batch",
                                   "status": "processed"})
    req = json.loads(raw)
    bid = f"batch_{uuid.uuid4().hex[:12]}"
    st["batches"][bid] = {"id": bid, "object": "batch", "endpoint": req["endpoint"],
                          "input_file_id": req["input_file_id"], "completion_window": "24h",
                          "status": "in_progress", "created_at": 0, "output_file_id": None,
                          "error_file_id": None, "request_counts": {"total": 0, "completed": 0, "failed": 0}}
    return handler._send(200, st["batches"][bid])


def _run(server: Any, batch: dict[str, Any]) -> None:
    st = _state(server)
    lines = [json.loads(x) for x in st["files"][batch["input_file_id"]].decode().splitlines() if x.strip()]
    out = []
    for line in lines:
        with server.lock:
            server.requests.append({"path": "batch:/v1/chat/completions", "body": line["body"]})
        out.append({"id": f"r-{line['custom_id'][:8]}", "custom_id": line["custom_id"],
                    "response": {"status_code": 200, "request_id": "x", "body": server.chat_body(line["body"])},
                    "error": None})
    fid = f"file-{uuid.uuid4().hex[:12]}"
    st["files"][fid] = "".join(json.dumps(o) + "\n" for o in out).encode()
    batch.update(status="completed", output_file_id=fid,
                 request_counts={"total": len(lines), "completed": len(lines), "failed": 0})


def get(server: Any, handler: Any) -> None:
    st = _state(server)
    with server.lock:
        server.requests.append({"path": "GET " + handler.path, "body": {}})
    m = re.search(r"/batches/([^/?]+)$", handler.path)
    if m:
        batch = st["batches"].get(m.group(1))
        if batch is None:
            return handler._send(404, {"error": {"message": "no such batch"}})
        if batch["status"] == "in_progress" and not server.batch_hold:
            _run(server, batch)
        return handler._send(200, batch)
    m = re.search(r"/files/([^/]+)/content$", handler.path)
    if m and m.group(1) in st["files"]:
        data = st["files"][m.group(1)]
        handler.send_response(200)
        handler.send_header("Content-Type", "application/octet-stream")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
        return None
    return handler._send(404, {"error": {"message": f"unknown path {handler.path}"}})
