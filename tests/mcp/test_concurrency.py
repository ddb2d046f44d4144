"""Concurrent calls, out-of-order answers, cancellation, id ownership and shutdown."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.mcp.helpers import SLEEP_BACKEND, Server, call, ids_of, minimal_env, modern, request


def args(project: Path, path: str) -> dict:
    return {"workspace": {"root": str(project)}, "path": path}


def running(server: Server, *tokens: str) -> None:
    """Wait until the backend has started each call, seen by its first progress notification."""
    seen: set[object] = set()
    while seen != set(tokens):
        msg = server.read()
        assert msg.get("method") == "notifications/progress", msg
        seen.add(msg["params"]["progressToken"])


def slow(rid: object, project: Path, path: str) -> dict:
    """A `lean_sync` whose start the test can see (it carries the progress token `t<rid>`)."""
    return call(rid, "lean_sync", args(project, path), call_meta={"progressToken": f"t{rid}"})


def cancel(rid: object) -> dict:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": rid, "reason": "test"},
    }


def test_responses_come_out_of_order(sleepy: Server, project: Path) -> None:
    sleepy.send(
        call(1, "lean_sync", args(project, "600ms")),
        call(2, "lean_sync", args(project, "10ms")),
        call(3, "beam_version"),
    )
    got = [sleepy.read()["id"] for _ in range(3)]
    assert got[-1] == 1 and sorted(got) == [1, 2, 3]


def test_cancelled_request_gets_no_response(sleepy: Server, project: Path) -> None:
    sleepy.send(slow(1, project, "5000ms"), slow("s", project, "5000ms"))
    running(sleepy, "t1", "ts")
    sleepy.send(cancel(1), cancel("s"))
    assert sleepy.ask(call(2, "beam_version"))["id"] == 2
    assert sleepy.quiet(0.5) == []
    stats = sleepy.ask(call(3, "beam_stats"))["result"]["structuredContent"]
    assert stats["tools"]["lean_sync"]["cancelled"] == 2
    # The id is free again after cancellation.
    assert sleepy.ask(call(1, "lean_sync", args(project, "1ms")))["id"] == 1


def test_cancelling_an_unknown_or_finished_request_is_harmless(
    sleepy: Server, project: Path
) -> None:
    sleepy.ask(call(1, "lean_sync", args(project, "1ms")))
    sleepy.send(cancel(1), cancel("nobody"), cancel(1.5))
    assert sleepy.ask(call(2, "beam_version"))["result"]["isError"] is False


def test_drop_is_not_cancellable_and_fences(sleepy: Server, project: Path) -> None:
    sleepy.send(
        call(1, "lean_sync", args(project, "400ms")),
        call(2, "lean_drop_workspace", {"workspace": {"root": str(project)}}),
        call(3, "lean_sync", args(project, "1ms")),
    )
    sleepy.send(cancel(2))
    order = [sleepy.read()["id"] for _ in range(3)]
    assert order == [1, 2, 3]


def test_duplicate_active_id_is_ignored(sleepy: Server, project: Path) -> None:
    sleepy.send(slow(1, project, "300ms"))
    running(sleepy, "t1")
    sleepy.send(call(1, "beam_version"), b'{"jsonrpc":"2.0","id":1,"method":5}\n')
    first = sleepy.read()
    assert first["id"] == 1 and first["result"]["structuredContent"]["tool"] == "lean_sync"
    assert sleepy.quiet(0.3) == []


def test_backend_failures_are_tool_errors(sleepy: Server, project: Path) -> None:
    crash = sleepy.ask(call(1, "lean_sync", args(project, "crash")))["result"]
    assert crash["isError"] and crash["structuredContent"]["code"] == "internalError"
    fail = sleepy.ask(call(2, "lean_sync", args(project, "fail")))["result"]
    assert fail["structuredContent"]["code"] == "workerExited"


def test_eof_with_calls_in_flight(sleepy: Server, project: Path) -> None:
    sleepy.send(slow(1, project, "30000ms"))
    running(sleepy, "t1")
    started = time.monotonic()
    code, stderr, rest = sleepy.close()
    assert (code, stderr, rest) == (0, b"", [])
    assert time.monotonic() - started < 10


def test_many_concurrent_calls_each_answered_once(sleepy: Server, project: Path) -> None:
    ids = list(range(100, 160))
    sleepy.send(*[call(i, "lean_sync", args(project, f"{(i * 37) % 200}ms")) for i in ids])
    got = [sleepy.read()["id"] for _ in ids]
    assert sorted(got) == ids
    assert sleepy.quiet(0.2) == []


def test_calls_run_concurrently_on_reused_workers(sleepy: Server, project: Path) -> None:
    """Calls run on long-lived worker tasks; reused ones (even after a cancellation) overlap."""
    sleepy.send(slow(1, project, "30000ms"))
    running(sleepy, "t1")
    sleepy.send(cancel(1))
    for round_ in range(2):
        ids = [100 + round_ * 100 + i for i in range(12)]
        started = time.monotonic()
        sleepy.send(*[call(i, "lean_sync", args(project, "1000ms")) for i in ids])
        got: list[object] = []
        while len(got) < len(ids):
            got.extend(ids_of([sleepy.read()]))  # notifications (beam.status) have no id
        assert sorted(got) == ids
        assert time.monotonic() - started < 6  # one after another would take 12 s
    assert sleepy.quiet(0.2) == []


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT", "SIGHUP"])
@pytest.mark.parametrize("phase", ["start", "calls"])
def test_signals_shut_down_cleanly(project: Path, signame: str, phase: str) -> None:
    srv = Server(env=minimal_env(**SLEEP_BACKEND))
    try:
        srv.ask(modern(1, "tools/list"))
        if phase == "calls":
            srv.send(call(2, "lean_sync", args(project, "30000ms")))
            srv.ask(call(3, "lean_sync", args(project, "1ms")))
        srv.proc.send_signal(getattr(signal, signame))
        code = srv.proc.wait(timeout=10)
        _, stderr, rest = srv.close()
        assert (code, stderr) == (0, b"")
        assert 2 not in ids_of(rest)
    finally:
        srv.kill()


def test_eof_right_after_requests_in_the_start_phase(server: Server) -> None:
    server.send(request(1, "ping"), modern(2, "server/discover"))
    code, stderr, rest = server.close()
    assert (code, stderr) == (0, b"")
    assert ids_of(rest) == [1, 2]
