"""memeval egress guard: a worker process may reach loopback only; every other address is refused.

Why: the baseline packages run in their own environments and call out on their own (telemetry,
notice configs fetched from the web, model hubs, price maps). The harness gives each package a
loopback proxy for every model call, so a worker never needs another host; anything else is a
leak of benchmark text or a silent dependency on the network. The guard refuses such a connection
before any packet is sent and records it, so a run (or a test) can show that nothing left.

Interface (for every worker; methods/external/envs.py `worker_env` sets it up):
- put this folder on the worker's PYTHONPATH: Python's `site` imports `sitecustomize` at start,
  so the guard is installed before the worker or its package imports anything;
- `MEMEVAL_EGRESS_LOG=/path/egress.jsonl` (optional): each refused attempt is appended there as one
  JSON line {"t", "pid", "op", "target", "where"} (where: the innermost frames outside this file);
  without it the refusal is only printed to stderr. An empty or absent file means nothing was tried;
- `GUARD_ACTIVE` (this module's attribute, `import sitecustomize`) says the guard is installed.

Allowed: loopback addresses (127.0.0.0/8, ::1), the names localhost/localhost.localdomain, Unix
sockets. Refused, with OSError(ENETUNREACH) or socket.gaierror: socket connect/connect_ex/sendto
to any other address, and name resolution (getaddrinfo, gethostbyname) of any other name (a DNS
query already leaves the machine). Child Python processes inherit PYTHONPATH and are guarded too.
Limit: native code that opens sockets without Python's socket module (a C library's own
resolver or connections) is not seen; the packages used here do their networking in Python.
Standard library only: it runs in every baseline environment.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import json
import os
import socket
import sys
import threading
import time
import traceback
from typing import Any

GUARD_ACTIVE = False
LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
_LOCK = threading.Lock()
_ORIGINAL: dict[str, Any] = {}


def _is_local_host(host: Any) -> bool:
    if host is None:  # getaddrinfo(None, port): the local wildcard/loopback address
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    name = str(host).strip().rstrip(".").lower()
    if name in LOCAL_NAMES or name == "":
        return True
    try:
        return ipaddress.ip_address(name.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _is_local_address(family: int, address: Any) -> bool:
    if family == getattr(socket, "AF_UNIX", None):
        return True
    if isinstance(address, tuple) and address:
        return _is_local_host(address[0])
    return False


def _where() -> list[str]:
    frames = [f for f in traceback.extract_stack() if f.filename != __file__]
    return [f"{f.filename}:{f.lineno} {f.name}" for f in frames[-6:]]


def _record(op: str, target: Any) -> None:
    entry = {"t": round(time.time(), 3), "pid": os.getpid(), "op": op, "target": repr(target), "where": _where()}
    line = json.dumps(entry)
    path = os.environ.get("MEMEVAL_EGRESS_LOG")
    with _LOCK:
        if path:
            with contextlib.suppress(OSError), open(path, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"[memeval egress guard] refused {op} {target!r}\n")


def _refused(op: str, target: Any) -> OSError:
    _record(op, target)
    return OSError(errno.ENETUNREACH, f"memeval egress guard: {op} to {target!r} refused (loopback only)")


def _connect(self: socket.socket, address: Any) -> None:
    if not _is_local_address(self.family, address):
        raise _refused("connect", address)
    return _ORIGINAL["connect"](self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    if not _is_local_address(self.family, address):
        _record("connect_ex", address)
        return errno.ENETUNREACH
    return _ORIGINAL["connect_ex"](self, address)


def _sendto(self: socket.socket, data: Any, *args: Any) -> int:
    address = args[-1] if args else None
    if not _is_local_address(self.family, address):
        raise _refused("sendto", address)
    return _ORIGINAL["sendto"](self, data, *args)


def _getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if not _is_local_host(host):
        _record("getaddrinfo", host)
        raise socket.gaierror(socket.EAI_NONAME, f"memeval egress guard: resolving {host!r} refused")
    return _ORIGINAL["getaddrinfo"](host, *args, **kwargs)


def _gethostbyname(host: Any) -> str:
    if not _is_local_host(host):
        _record("gethostbyname", host)
        raise socket.gaierror(socket.EAI_NONAME, f"memeval egress guard: resolving {host!r} refused")
    return _ORIGINAL["gethostbyname"](host)


def install() -> None:
    """Patch the socket module once (idempotent)."""
    global GUARD_ACTIVE
    if GUARD_ACTIVE:
        return
    for name, patch in (("connect", _connect), ("connect_ex", _connect_ex), ("sendto", _sendto)):
        _ORIGINAL[name] = getattr(socket.socket, name)
        setattr(socket.socket, name, patch)
    _ORIGINAL["getaddrinfo"] = socket.getaddrinfo
    socket.getaddrinfo = _getaddrinfo
    _ORIGINAL["gethostbyname"] = socket.gethostbyname
    socket.gethostbyname = _gethostbyname
    GUARD_ACTIVE = True


install()
