"""No orphans when the server is killed.

Lean's file workers run in sessions of their own and, here, ignore EOF and SIGTERM
(`FAKE_LEAN_STUBBORN_WORKERS`): once the MCP server is SIGKILLed only its watchdog can end them.
These are the in-process broker's trees (`LEAN_BEAM_HOST=off`): a shared host outlives its
clients by design, and `tests/host/test_lifecycle.py` kills hosts the same way.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psutil

from tests.broker.fake import fake_server, ok, survivors, workspace
from tests.mcp.helpers import Server


def _tree(pid: int) -> list[psutil.Process]:
    return psutil.Process(pid).children(recursive=True)


def test_stubborn_workers_die_with_a_sigkilled_server(servers: list[Server], project: Path) -> None:
    server = fake_server(servers, FAKE_LEAN_STUBBORN_WORKERS="1", LEAN_BEAM_HOST="off")
    ws = workspace(project)
    (project / "B.lean").write_text("def b : Nat := 2\n")
    ok(server, 1, "lean_sync", {**ws, "path": "Main.lean"})
    ok(server, 2, "lean_sync", {**ws, "path": "B.lean"})
    tree = _tree(server.proc.pid)
    setsid = [p for p in tree if os.getsid(p.pid) == p.pid and "fake_lean" in " ".join(p.cmdline())]
    assert len(setsid) >= 2, [p.cmdline() for p in tree]  # the server and its workers
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait(10)
    left = survivors(tree)
    assert not left, f"outlived the server: {left}"


def test_stubborn_workers_die_when_the_server_exits_on_a_signal(
    servers: list[Server], project: Path
) -> None:
    server = fake_server(servers, FAKE_LEAN_STUBBORN_WORKERS="1", LEAN_BEAM_HOST="off")
    ok(server, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    tree = _tree(server.proc.pid)
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(20) == 0
    assert not survivors(tree)
