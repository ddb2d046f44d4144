"""No orphans when the server is killed.

Lean's file workers run in sessions of their own and, here, ignore EOF and SIGTERM
(`FAKE_LEAN_STUBBORN_WORKERS`): once the MCP server is SIGKILLed only its watchdog can end them.
These are the in-process broker's trees (`LEAN_BEAM_HOST=off`): a shared host outlives its
clients by design, and `tests/host/test_lifecycle.py` kills hosts the same way.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from tests.broker.conftest import start
from tests.broker.fake import FAST_FAKE, fake_server, ok, survivors, until, workspace
from tests.mcp.helpers import REPO, Server, call


@pytest.fixture(autouse=True)
def _in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests watch the MCP server's own process (its trips off the loop, its children, its
    system calls): they run it with the broker in-process. The shared host has its own tests
    in tests/host."""
    monkeypatch.setenv("LEAN_BEAM_HOST", "off")


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


# Every child the server starts, not only Lean: a `lake build` of lean_verify or lean_save, and
# `beam-cli mcp-config` with the `lake --version` it runs. Each runs in a session of its own or
# below one, so neither the server's process group nor a parent-death signal reaches them.

LAKE = REPO / "tests" / "fake_lean" / "bin" / "lake"


def _descendants_until(server: Server, what: str, match: Callable[[str], bool]) -> list:
    """The server's descendants once one whose command line matches has started (bounded)."""

    def found() -> list[psutil.Process]:
        tree = _tree(server.proc.pid)
        return tree if any(match(_cmdline(p)) for p in tree) else []

    return until(found, what)


def _cmdline(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def _sigkill(server: Server) -> None:
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait(10)


def _no_survivors(tree: list[psutil.Process]) -> None:
    """Every process of `tree` ends (bounded wait); any left is named, then killed."""
    left = survivors(tree)
    named = [_cmdline(p) for p in tree if p.pid in left]
    for process in tree:
        if process.pid in left:
            with contextlib.suppress(psutil.Error):
                process.kill()
    assert not left, f"outlived the server: {named}"


@pytest.mark.parametrize("tool", ["lean_verify", "lean_save"])
def test_a_lake_build_dies_with_a_sigkilled_server(
    servers: list[Server], project: Path, tool: str
) -> None:
    (project / "lakefile.toml").write_text('name = "demo"\n')
    server = start(
        servers,
        "--lean-cmd",
        shlex.join([str(LAKE), "serve"]),
        **FAST_FAKE,
        FAKE_LAKE_BUILD_MS="120000",
    )
    server.send(call(1, tool, {**workspace(project), "path": "Main.lean"}))
    tree = _descendants_until(server, "lake build", lambda line: " build " in f"{line} ")
    _sigkill(server)
    _no_survivors(tree)


def test_mcp_config_and_its_lake_die_with_a_sigkilled_server(
    servers: list[Server], project: Path
) -> None:
    beam_cli = shutil.which("beam-cli", path=os.path.dirname(sys.executable))
    if beam_cli is None:
        pytest.skip("beam-cli is not installed next to the test interpreter")
    path = f"{LAKE.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    server = start(
        servers, "--beam-cli", beam_cli, **{**FAST_FAKE, "PATH": path, "FAKE_LAKE_MODE": "hang"}
    )
    server.send(call(1, "lean_sync", {**workspace(project), "path": "Main.lean"}))
    tree = _descendants_until(server, "lake --version", lambda line: "--version" in line)
    assert any("mcp-config" in _cmdline(p) for p in tree), [_cmdline(p) for p in tree]
    _sigkill(server)
    _no_survivors(tree)


def _watchdog(server: Server, lean_pid: int) -> psutil.Process:
    """The server's one child besides its Lean server."""
    (watchdog,) = [p for p in psutil.Process(server.proc.pid).children() if p.pid != lean_pid]
    return watchdog


def test_the_watchdog_is_no_second_python(servers: list[Server], project: Path) -> None:
    server = fake_server(servers)
    ok(server, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    lean = ok(server, 2, "beam_stats", {})["workspaces"][0]["session"]["pid"]
    watchdog = _watchdog(server, lean)
    assert "python" not in os.path.basename(watchdog.exe()), watchdog.cmdline()
    assert watchdog.memory_info().rss < 4 * 2**20, watchdog.memory_info()
    assert os.getsid(watchdog.pid) == watchdog.pid  # a kill of the server's group spares it


def test_without_grep_the_python_watchdog_still_reaps(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    server = fake_server(servers, FAKE_LEAN_STUBBORN_WORKERS="1", PATH=str(empty))
    ok(server, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    lean = ok(server, 2, "beam_stats", {})["workspaces"][0]["session"]["pid"]
    assert "python" in os.path.basename(_watchdog(server, lean).exe())
    tree = _tree(server.proc.pid)
    _sigkill(server)
    _no_survivors(tree)
