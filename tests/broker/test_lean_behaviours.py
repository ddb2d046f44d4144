"""Real-Lean behaviours the broker must survive, through the real server against the fake.

* A header that fails fast: Lean sends the fatal ``fileProgress`` *before* publishing the header
  error (``reportSnapshots``); the fake can hold the publish back a little to make that visible.
* A header edit on an older watchdog: the worker exits with code 2, a new one starts, and the
  pending ``waitForDiagnostics`` is never answered (``FAKE_LEAN_RESTART_DROPS=1``); one that
  loses every ``waitForDiagnostics`` (``FAKE_LEAN_LOSE_WAITS=1``) ends in the barrier's timeout.
* A worker that crashed before the barrier was sent: only the fatal ``fileProgress`` tells, and
  Lean holds the barrier's request until the next edit.
* RPC sessions: string ids, keep-alives, expiry (``-32900``) and reconnect, release on close.
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.broker.fake import err, fake_server, ok, request_log, rpc_methods, until, workspace
from tests.mcp.helpers import Server

PROOF = "example (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  constructor\n  all_goals sorry\n"


def test_fatal_header_counts_its_error_though_progress_came_first(
    servers: list[Server], project: Path
) -> None:
    (project / "Main.lean").write_text("import Does.Not.Exist\ndef y := 1\n")
    server = fake_server(servers, FAKE_LEAN_FATAL_PUBLISH_DELAY_MS="400")
    args = {**workspace(project), "path": "Main.lean", "diagnostics_in_result": True}
    synced = ok(server, 1, "lean_sync", args)
    assert synced["readiness"]["save_ready"] is False
    assert synced["readiness"]["reason"] == "documentDidNotElaborateSuccessfully"
    assert synced["diagnostics"]["counts"]["error"] == 1
    (item,) = synced["diagnostics"]["items"]
    assert item["message"].startswith("unknown module prefix 'Does'")
    assert item["range"]["start"] == {"line": 0, "character": 0}


def test_fatal_header_probe_is_not_a_success(servers: list[Server], project: Path) -> None:
    (project / "Main.lean").write_text("import Does.Not.Exist\n" + PROOF)
    server = fake_server(servers, FAKE_LEAN_FATAL_PUBLISH_DELAY_MS="400")
    ws = workspace(project)
    synced = ok(server, 1, "lean_sync", {**ws, "path": "Main.lean"})
    probe = {"path": "Main.lean", "version": synced["version"], "line": 3, "character": 2}
    result = ok(server, 2, "lean_run_at", {**ws, **probe, "text": "skip"})
    assert result["success"] is False
    assert result["next_handle"] is None


def test_barrier_survives_a_restart_that_drops_it(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    (project / "A.lean").write_text("def a : Nat := 1\n")
    (project / "B.lean").write_text("def b : Nat := 2\n")
    (project / "Main.lean").write_text("import A\ndef c : Nat := a\n")
    log = tmp_path / "requests.jsonl"
    server = fake_server(
        servers,
        "--barrier-timeout-ms",
        "30000",
        "--barrier-reissue-ms",
        "300",
        FAKE_LEAN_RESTART_DROPS="1",
        FAKE_LEAN_REQUEST_LOG=str(log),
    )
    ws = workspace(project)
    first = ok(server, 1, "lean_sync", {**ws, "path": "Main.lean"})
    assert first["readiness"]["save_ready"] is True
    (project / "Main.lean").write_text("import A\nimport B\ndef c : Nat := a + b + missing\n")
    args = {**ws, "path": "Main.lean", "diagnostics_in_result": True}
    second = ok(server, 2, "lean_sync", args)
    assert second["version"] == first["version"] + 1
    assert second["diagnostics"]["counts"]["error"] == 1
    assert "missing" in second["diagnostics"]["items"][0]["message"]
    entries = request_log(log)
    assert {"dropped": "textDocument/waitForDiagnostics"} in [
        {"dropped": e["dropped"]} for e in entries if "dropped" in e
    ]
    waits = [e for e in entries if e.get("request") == "textDocument/waitForDiagnostics"]
    assert len(waits) == 3  # the first sync, the dropped one, the one sent again


def _goals(server: Server, rid: int, ws: dict, version: int) -> dict:
    args = {"path": "Main.lean", "version": version, "line": 1, "character": 2}
    return ok(server, rid, "lean_goals", {**ws, **args, "mode": "after"})


def test_expired_rpc_session_is_reconnected_once(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    (project / "Main.lean").write_text(PROOF)
    log = tmp_path / "requests.jsonl"
    server = fake_server(
        servers,
        "--rpc-keepalive-ms",
        "600000",
        FAKE_LEAN_RPC_EXPIRY_MS="300",
        FAKE_LEAN_REQUEST_LOG=str(log),
    )
    ws = workspace(project)
    version = ok(server, 1, "lean_sync", {**ws, "path": "Main.lean"})["version"]
    first = _goals(server, 2, ws, version)
    time.sleep(0.6)  # longer than the fake's expiry: the session is gone
    second = _goals(server, 3, ws, version)
    assert first["source"] == second["source"] == "rpc"
    assert first["goals"] == second["goals"]
    assert [g["userName"] for g in second["goals"]] == ["left", "right"]
    calls = [m for m in rpc_methods(log) if m in ("connect", "call")]
    assert calls == ["connect", "call", "call", "connect", "call"]


def test_keepalive_keeps_the_session_and_close_releases_it(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    (project / "Main.lean").write_text(PROOF)
    log = tmp_path / "requests.jsonl"
    server = fake_server(
        servers,
        "--rpc-keepalive-ms",
        "100",
        FAKE_LEAN_RPC_EXPIRY_MS="400",
        FAKE_LEAN_REQUEST_LOG=str(log),
    )
    ws = workspace(project)
    version = ok(server, 1, "lean_sync", {**ws, "path": "Main.lean"})["version"]
    _goals(server, 2, ws, version)
    # past the fake's 400 ms expiry, kept alive all along
    until(lambda: rpc_methods(log).count("keepAlive") >= 5, "five keep-alives (500 ms)")
    assert _goals(server, 3, ws, version)["source"] == "rpc"
    until(lambda: rpc_methods(log).count("release") == 2, "a release of each answer's refs")
    methods = rpc_methods(log)
    assert methods.count("connect") == 1
    assert methods.count("keepAlive") >= 2
    ok(server, 4, "lean_close", {**ws, "path": "Main.lean"})
    until(lambda: rpc_methods(log).count("release") == 3, "the release on close")
    time.sleep(0.4)
    settled = rpc_methods(log).count("keepAlive")
    time.sleep(0.4)
    assert rpc_methods(log).count("keepAlive") == settled  # nothing left to keep alive


def test_header_edit_restarts_the_rpc_session(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    (project / "A.lean").write_text("def a : Nat := 1\n")
    (project / "Main.lean").write_text("import A\n" + PROOF)
    log = tmp_path / "requests.jsonl"
    server = fake_server(servers, FAKE_LEAN_REQUEST_LOG=str(log))
    ws = workspace(project)
    args = {"path": "Main.lean", "line": 2, "character": 2, "mode": "after"}
    version = ok(server, 1, "lean_sync", {**ws, "path": "Main.lean"})["version"]
    first = ok(server, 2, "lean_goals", {**ws, **args, "version": version})
    (project / "Main.lean").write_text("import Std\n" + PROOF)
    version = ok(server, 3, "lean_sync", {**ws, "path": "Main.lean"})["version"]
    second = ok(server, 4, "lean_goals", {**ws, **args, "version": version})
    assert first["goals"] == second["goals"] and second["source"] == "rpc"
    calls = [m for m in rpc_methods(log) if m in ("connect", "call")]
    assert calls == ["connect", "call", "call", "connect", "call"]


def test_a_worker_that_crashed_before_the_barrier_is_a_crash(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    # The worker dies before the barrier is sent: no request sees -32902; Lean only sends the
    # fatal progress and holds every later request (waitForDiagnostics too) until an edit.
    (project / "Main.lean").write_text("def a : Nat := 1\n#fake_crash_once\n")
    log = tmp_path / "requests.jsonl"
    server = fake_server(servers, "--barrier-reissue-ms", "100", FAKE_LEAN_REQUEST_LOG=str(log))
    ws = workspace(project)
    ok(server, 1, "lean_update", {**ws, "path": "Main.lean"})
    until(lambda: any("crash" in e for e in request_log(log)), "the worker's crash")
    crashed = err(server, 2, "lean_sync", {**ws, "path": "Main.lean"})
    assert crashed["code"] == "workerExited"
    assert "crashed" in crashed["message"]
    revived = ok(server, 3, "lean_sync", {**ws, "path": "Main.lean"})
    assert revived["version"] == 2 and revived["readiness"]["save_ready"] is True


def test_a_barrier_lean_keeps_dropping_ends_as_a_timeout(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    # Every waitForDiagnostics is lost after the progress ended: each is sent again after the
    # reissue delay until the barrier's one limit is used up, a timeout, never a complete sync.
    log = tmp_path / "requests.jsonl"
    server = fake_server(
        servers,
        "--barrier-timeout-ms",
        "1000",
        "--barrier-reissue-ms",
        "100",
        FAKE_LEAN_LOSE_WAITS="1",
        FAKE_LEAN_REQUEST_LOG=str(log),
    )
    failed = err(server, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    assert failed["code"] == "timeout" and failed["data"]["phase"] == "barrier"
    entries = request_log(log)
    waits = [e for e in entries if e.get("request") == "textDocument/waitForDiagnostics"]
    dropped = [e for e in entries if e.get("dropped") == "textDocument/waitForDiagnostics"]
    assert len(waits) >= 2 and len(dropped) == len(waits)
