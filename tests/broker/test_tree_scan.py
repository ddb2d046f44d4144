"""Several live workspaces under one shared process-tree scan: nothing outlives the server.

Each workspace's fake Lean runs file workers in sessions of their own that ignore EOF and
SIGTERM (`FAKE_LEAN_STUBBORN_WORKERS`), so only the kill path (the remembered descendants,
the marker search, the watchdog) can end them.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psutil
import pytest

from tests.broker.fake import fake_server, ok, survivors, workspace
from tests.mcp.helpers import Server

WORKSPACES = 3


def _projects(tmp_path: Path) -> list[Path]:
    roots = []
    for index in range(WORKSPACES):
        root = tmp_path / f"ws{index}"
        root.mkdir()
        (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
        (root / "A.lean").write_text("def a : Nat := 1\n")
        (root / "B.lean").write_text("def b : Nat := 2\n")
        roots.append(root.resolve())
    return roots


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_no_descendant_of_any_workspace_outlives_the_server(
    servers: list[Server], tmp_path: Path, how: str
) -> None:
    # The trees are the server's own children: the in-process broker (a shared host's Lean
    # outlives its clients by design; tests/host covers killing hosts).
    server = fake_server(servers, FAKE_LEAN_STUBBORN_WORKERS="1", LEAN_BEAM_HOST="off")
    rid = 0
    for root in _projects(tmp_path):
        for name in ("A.lean", "B.lean"):
            rid += 1
            ok(server, rid, "lean_sync", {**workspace(root), "path": name})
    stats = ok(server, rid + 1, "beam_stats", {})
    assert len(stats["workspaces"]) == WORKSPACES
    tree = psutil.Process(server.proc.pid).children(recursive=True)
    setsid = [p for p in tree if os.getsid(p.pid) == p.pid and "fake_lean" in " ".join(p.cmdline())]
    assert len(setsid) >= WORKSPACES * 3, [p.cmdline() for p in tree]  # servers and workers
    server.proc.send_signal(getattr(signal, how))
    server.proc.wait(20)
    assert not survivors(tree), "outlived the server"
