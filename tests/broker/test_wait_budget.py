"""`wait_ms` bounds the whole call, the start of the workspace's Lean server included.

The fake Lean answers `initialize` only after `FAKE_LEAN_INIT_DELAY_MS` (a slow Lake workspace
load). A call whose Lean is still starting when its `wait_ms` runs out answers the tool error
`starting` with `retry_after_ms`; the start goes on, and later calls join it instead of starting
Lean again. The figures in the bounds below are far apart on purpose: they separate "answered
within wait_ms" from "answered after the start, or after the start plus wait_ms", on a busy
machine too.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.broker.fake import fake_server, workspace
from tests.mcp.helpers import Server, call, structured


@pytest.fixture(autouse=True)
def _in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests watch the MCP server's own process (its trips off the loop, its children, its
    system calls): they run it with the broker in-process. The shared host has its own tests
    in tests/host."""
    monkeypatch.setenv("LEAN_BEAM_HOST", "off")


def _ask(server: Server, rid: int, tool: str, args: dict) -> tuple[dict, float]:
    started = time.monotonic()
    server.send(call(rid, tool, args))
    reply = server.read_until(rid, timeout=120)[0]
    return reply, time.monotonic() - started


def test_a_call_answers_starting_while_lean_starts(servers: list[Server], project: Path) -> None:
    server = fake_server(servers, FAKE_LEAN_INIT_DELAY_MS="12000")
    ws = workspace(project)
    reply, took = _ask(server, 1, "lean_sync", {**ws, "path": "Main.lean", "wait_ms": 1500})
    error = structured(reply)
    assert reply["result"]["isError"] is True, error
    assert error["code"] == "starting", error
    assert error["data"]["phase"] == "sessionStart" and error["data"]["retry_after_ms"] > 0
    assert error["data"]["fix"], error
    assert took < 8, took  # not after the 12 s start
    hover = {**ws, "path": "Main.lean", "line": 0, "character": 4, "wait_ms": 0}
    again, took = _ask(server, 2, "lean_hover", hover)
    assert structured(again)["code"] == "starting", again
    assert took < 5, took
    done, _ = _ask(server, 3, "lean_sync", {**ws, "path": "Main.lean", "wait_ms": 60000})
    assert done["result"]["isError"] is False, done
    assert structured(done)["diagnostics"]["complete"] is True
    stats, _ = _ask(server, 4, "beam_stats", {})
    sessions = [w["session"] for w in structured(stats)["workspaces"]]
    assert [s["epoch"] for s in sessions] == [1], sessions  # the calls joined one start


def test_the_start_counts_against_the_wait(servers: list[Server], project: Path) -> None:
    """Lean starts in 6 s, the file then elaborates for 30 s: with `wait_ms` 9000 the answer is
    an unfinished sync at about 9 s, not at 6 + 9 s."""
    (project / "Main.lean").write_text("example : True := by\n  sleep 30000\n  trivial\n")
    server = fake_server(servers, FAKE_LEAN_INIT_DELAY_MS="6000")
    ws = workspace(project)
    reply, took = _ask(server, 1, "lean_sync", {**ws, "path": "Main.lean", "wait_ms": 9000})
    body = structured(reply)
    assert reply["result"]["isError"] is False, body
    assert body["diagnostics"]["complete"] is False and body["retry_after_ms"] > 0, body
    assert took < 13.5, took
