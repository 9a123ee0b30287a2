"""Egress guard for baseline workers: refuse every non-loopback connection and record it.

Python imports `sitecustomize` at start-up from the first folder on sys.path that has one; the
harness puts this folder on a worker's PYTHONPATH, so the guard is in place before the package
(or its telemetry) imports anything. Standard library only: it runs in every baseline env.

A package that phones home (a telemetry client, a price-map fetch, a model download) then fails
fast instead of hanging or leaking, and each attempt is appended as one JSON line to the file
named by MEMEVAL_EGRESS_LOG, which the framework reads after each job: a run says how many
connections its worker tried, and the no-egress tests fail on any. Name lookups count too
(`getaddrinfo` of a non-local name), since a blocked lookup is the first sign of a call home.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import sys
import time
import traceback

LOG_ENV = "MEMEVAL_EGRESS_LOG"
_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", ""}


def _is_local(host: object) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    name = str(host).strip("[]").lower()
    if name in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.split("%")[0]).is_loopback
    except ValueError:
        return False


def _record(kind: str, host: object, port: object) -> None:
    path = os.environ.get(LOG_ENV)
    if not path:
        return
    frames = [f"{f.filename}:{f.lineno}" for f in traceback.extract_stack(limit=12)[:-2]]
    line = json.dumps({"kind": kind, "host": str(host), "port": port, "pid": os.getpid(),
                       "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "stack": frames[-6:]})
    try:
        with open(path, "a", encoding="utf-8") as fh:  # one write per line: safe across threads
            fh.write(line + "\n")
    except OSError:
        pass


def _address(family: int, address: object) -> tuple[object, object] | None:
    """(host, port) of an internet address; None for the kinds that never leave the machine."""
    if family not in (socket.AF_INET, socket.AF_INET6) or not isinstance(address, tuple):
        return None
    return address[0], address[1] if len(address) > 1 else None


_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_getaddrinfo = socket.getaddrinfo


def _guarded_connect(self: socket.socket, address: object) -> None:
    hp = _address(self.family, address)
    if hp is not None and not _is_local(hp[0]):
        _record("connect", *hp)
        raise ConnectionRefusedError(f"memeval egress guard: connection to {hp[0]}:{hp[1]} refused")
    return _connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    hp = _address(self.family, address)
    if hp is not None and not _is_local(hp[0]):
        _record("connect", *hp)
        return 111  # ECONNREFUSED
    return _connect_ex(self, address)


def _guarded_getaddrinfo(host: object, port: object, *args: object, **kwargs: object) -> list:
    if not _is_local(host):
        _record("getaddrinfo", host, port)
        raise socket.gaierror(socket.EAI_NONAME, f"memeval egress guard: lookup of {host} refused")
    return _getaddrinfo(host, port, *args, **kwargs)


def install() -> None:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = _guarded_getaddrinfo  # type: ignore[assignment]


if os.environ.get(LOG_ENV):
    install()
    sys.modules.setdefault("memeval_egress_guard", sys.modules[__name__])
