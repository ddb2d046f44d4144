"""End to end: the stdio server, the broker and the fake Lean server as real subprocesses."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.broker.fake import err, fake_processes, fake_server, ok, workspace
from tests.mcp.helpers import Server


def test_sync_hover_and_versions(servers: list[Server], project: Path) -> None:
    server = fake_server(servers)
    ws = workspace(project)
    first = ok(server, 1, "lean_update", {**ws, "path": "Main.lean"})
    assert first == {**ws, "version": 1, "changed": True}
    synced = ok(server, 2, "lean_sync", {**ws, "path": "Main.lean"})
    assert synced["readiness"]["save_ready"] is True and synced["version"] == 1
    assert synced["diagnostics"]["counts"]["total"] == 0
    assert synced["document_progress"]["done"] is True
    hover = ok(
        server,
        3,
        "lean_hover",
        {**ws, "path": "Main.lean", "version": 1, "line": 0, "character": 4},
    )
    assert "answerA : Nat" in hover["contents"]["value"]
    (project / "Main.lean").write_text("def answerA : Nat := 43\n")
    stale = err(
        server,
        4,
        "lean_hover",
        {**ws, "path": "Main.lean", "version": 1, "line": 0, "character": 4},
    )
    assert stale["code"] == "contentModified"
    assert stale["data"]["reason"] == "documentVersionMismatch"
    assert stale["data"]["currentVersion"] == 2
    past = err(
        server,
        5,
        "lean_hover",
        {**ws, "path": "Main.lean", "version": 2, "line": 0, "character": 99},
    )
    assert past["code"] == "invalidParams"
    ok(server, 6, "lean_close", {**ws, "path": "Main.lean"})
    reopened = ok(server, 7, "lean_update", {**ws, "path": "Main.lean"})
    assert reopened["version"] == 3


def test_errors_sorry_and_goals(servers: list[Server], project: Path) -> None:
    (project / "Main.lean").write_text(
        "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
        "  constructor\n"
        "  exact hp\n"
        "theorem foo : 1 + 1 = 2 := by sorry\n"
    )
    server = fake_server(servers)
    ws = workspace(project)
    synced = ok(
        server,
        1,
        "lean_sync",
        {**ws, "path": "Main.lean", "diagnostic_scope": "all", "diagnostics_in_result": True},
    )
    assert synced["readiness"]["reason"] == "documentErrors"
    assert synced["diagnostics"]["counts"]["error"] == 1
    assert synced["diagnostics"]["counts"]["warning"] == 1
    messages = [item["message"] for item in synced["diagnostics"]["items"]]
    assert any(m.startswith("unsolved goals") for m in messages)
    pos = {**ws, "path": "Main.lean", "version": synced["version"], "line": 1, "character": 2}
    before = ok(server, 2, "lean_goals", {**pos, "mode": "before"})
    assert before["goals"][0]["target"] == "p ∧ q"
    assert before["goals"][0]["hyps"][0] == {"names": ["p", "q"], "type": "Prop"}
    after = ok(server, 3, "lean_goals", {**pos, "mode": "after"})
    assert [g.get("userName") for g in after["goals"]] == ["left", "right"]
    todo = ok(
        server,
        4,
        "lean_todo",
        {
            **ws,
            "path": "Main.lean",
            "version": synced["version"],
            "start_line": 0,
            "start_character": 0,
            "end_line": 4,
            "end_character": 0,
        },
    )
    kinds = {item["kind"] for item in todo["items"]}
    assert {"sorry", "incomplete_proof"} <= kinds


def test_fatal_header_is_a_successful_sync(servers: list[Server], project: Path) -> None:
    (project / "Main.lean").write_text("import Does.Not.Exist\ndef y := 1\n")
    server = fake_server(servers)
    synced = ok(server, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    assert synced["readiness"]["reason"] == "documentDidNotElaborateSuccessfully"
    assert synced["diagnostics"]["counts"]["error"] == 1


def test_worker_crash_then_recovery(servers: list[Server], project: Path) -> None:
    (project / "Main.lean").write_text("def a := 1\n#fake_crash_once\n")
    server = fake_server(servers)
    ws = workspace(project)
    first = err(server, 1, "lean_sync", {**ws, "path": "Main.lean"})
    assert first["code"] == "workerExited"
    again = ok(server, 2, "lean_sync", {**ws, "path": "Main.lean"})
    assert again["version"] == 2


def test_server_death_restarts_session(servers: list[Server], project: Path) -> None:
    (project / "Die.lean").write_text("#fake_die\n")
    server = fake_server(servers)
    ws = workspace(project)
    ok(server, 1, "lean_sync", {**ws, "path": "Main.lean"})
    died = err(server, 2, "lean_sync", {**ws, "path": "Die.lean"})
    assert died["code"] == "workerExited"
    back = ok(server, 3, "lean_sync", {**ws, "path": "Main.lean"})
    assert back["version"] == 2
    stats = ok(server, 4, "beam_stats", {})
    assert stats["workspaces"][0]["session"]["epoch"] == 2


def test_never_answering_is_bounded(servers: list[Server], project: Path, tmp_path: Path) -> None:
    (project / "Slow.lean").write_text("example : True := by\n  sleep 600000\n  trivial\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (other / "Main.lean").write_text("def answerA : Nat := 42\n")
    server = fake_server(servers, "--barrier-timeout-ms", "500", "--navigation-timeout-ms", "500")
    slow = err(server, 1, "lean_sync", {**workspace(project), "path": "Slow.lean"})
    assert slow["code"] == "timeout" and slow["data"]["phase"] == "barrier"
    ok(server, 2, "lean_sync", {**workspace(other), "path": "Main.lean"})
    hover = err(
        server,
        3,
        "lean_hover",
        {**workspace(project), "path": "Slow.lean", "version": 1, "line": 2, "character": 2},
    )
    assert hover["code"] == "timeout" and hover["data"]["phase"] == "navigation"


@pytest.mark.parametrize("how", ["eof", "sigterm", "drop", "idle"])
def test_no_lean_process_outlives(servers: list[Server], project: Path, how: str) -> None:
    # A shared host outlives its last client by its idle time: one second here.
    idle = "300" if how == "idle" else "0"
    server = fake_server(servers, "--idle-timeout-ms", idle, LEAN_BEAM_HOST_IDLE_S="1")
    ws = workspace(project)
    ok(server, 1, "lean_sync", {**ws, "path": "Main.lean"})
    assert fake_processes(project)
    if how == "eof":
        assert server.close()[0] == 0
    elif how == "sigterm":
        server.proc.terminate()
        server.proc.wait(20)
    elif how == "drop":
        dropped = ok(server, 2, "lean_drop_workspace", ws)
        assert dropped["dropped"] is True
        again = ok(server, 3, "lean_drop_workspace", ws)
        assert again["dropped"] is False and again["reason"] == "notFound"
    else:
        deadline = time.monotonic() + 10
        while fake_processes(project) and time.monotonic() < deadline:
            time.sleep(0.1)
    deadline = time.monotonic() + 10
    while fake_processes(project) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert fake_processes(project) == []
