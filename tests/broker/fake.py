"""Starting the fake Lean server the way a user would (``--lean-cmd`` or a fake ``lake``), and
reading what it received."""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import psutil

from tests.broker.conftest import start
from tests.mcp.helpers import REPO, WAIT_S, Server, call, structured

T = TypeVar("T")

FAKE_CMD = shlex.join([sys.executable, "-m", "tests.fake_lean"])

# Knobs of the fake and the server that keep tests fast.
FAST_FAKE = {
    "FAKE_LEAN_REPORT_DELAY_MS": "5",
    "FAKE_LEAN_CMD_DELAY_MS": "1",
    "PYTHONPATH": str(REPO),
}


def fake_server(servers: list[Server], *flags: str, **env: str) -> Server:
    return start(servers, "--lean-cmd", FAKE_CMD, *flags, **{**FAST_FAKE, **env})


def workspace(root: Path) -> dict:
    return {"workspace": {"root": str(root)}}


def request_log(path: Path) -> list[dict]:
    """The fake's ``FAKE_LEAN_REQUEST_LOG``: requests it received and ids it was asked to cancel."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def rpc_methods(path: Path) -> list[str]:
    """The ``$/lean/rpc/...`` methods of the fake's request log, in order, without the prefix."""
    out = []
    for entry in request_log(path):
        method = entry.get("request") or entry.get("notification") or ""
        if method.startswith("$/lean/rpc/"):
            out.append(method.removeprefix("$/lean/rpc/"))
    return out


def until(condition: Callable[[], T], what: str, timeout_s: float = WAIT_S) -> T:
    """Poll ``condition`` until it is truthy (bounded); its value."""
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)
    return value


def fake_processes(root: Path) -> list[psutil.Process]:
    """Every fake Lean process (server, Lake, file workers) running in ``root``."""
    found = []
    for process in psutil.process_iter(["cmdline", "cwd"]):
        try:
            command = " ".join(process.info["cmdline"] or [])
            if "fake_lean" in command and process.info["cwd"] == str(root):
                found.append(process)
        except psutil.Error:
            continue
    return found


def ok(server: Server, rid: int, tool: str, args: dict, **meta: object) -> dict:
    """Call a tool and return its structuredContent, asserting it is not a tool error."""
    reply = server.ask(call(rid, tool, args, **meta))
    assert reply["result"]["isError"] is False, reply
    return structured(reply)


def err(server: Server, rid: int, tool: str, args: dict) -> dict:
    """Call a tool and return its structuredContent, asserting it is a tool error."""
    reply = server.ask(call(rid, tool, args))
    assert reply["result"]["isError"] is True, reply
    return structured(reply)


def survivors(processes: list[psutil.Process], seconds: float = 20) -> list[int]:
    """The pids of ``processes`` still running (not zombies) after waiting up to ``seconds``."""
    deadline = time.monotonic() + seconds
    alive = processes
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        time.sleep(0.05)
    return [p.pid for p in alive]
