"""Progress notifications, the beam.status notice and log levels (test-only sleep backend)."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.helpers import Server, call, request


def sync_args(project: Path, path: str, **extra: object) -> dict:
    return {"workspace": {"root": str(project)}, "path": path, **extra}


def methods(messages: list[dict]) -> list[str]:
    return [m["method"] for m in messages if "method" in m]


def test_progress_is_monotonic_and_precedes_the_response(sleepy: Server, project: Path) -> None:
    for rid, token in ((1, "tok"), (2, 7)):
        msg = call(
            rid, "lean_sync", sync_args(project, "150ms steps3"), call_meta={"progressToken": token}
        )
        sleepy.send(msg)
        response, before = sleepy.read_until(rid)
        progress = [m["params"] for m in before if m.get("method") == "notifications/progress"]
        assert [p["progress"] for p in progress] == [1, 2, 3, 4]
        assert all(p["progressToken"] == token for p in progress)
        assert all(isinstance(p["message"], str) for p in progress)
        assert response["result"]["isError"] is False
        # With a token there is no beam.status notice even though the call is slow.
        assert "notifications/message" not in methods(before)


def test_process_tools_ignore_the_token(sleepy: Server) -> None:
    sleepy.send(call(1, "beam_version", call_meta={"progressToken": "t"}))
    _, before = sleepy.read_until(1)
    assert before == []


def test_legacy_default_level_gets_one_status_notice(sleepy: Server, project: Path) -> None:
    sleepy.legacy_init()
    sleepy.send(call(1, "lean_sync", sync_args(project, "700ms"), modern_meta=False))
    _, before = sleepy.read_until(1)
    notices = [m["params"] for m in before if m.get("method") == "notifications/message"]
    assert len(notices) == 1
    notice = notices[0]
    assert (notice["level"], notice["logger"]) == ("notice", "beam.status")
    data = notice["data"]
    assert data["requestId"] == 1 and data["tool"] == "lean_sync"
    assert data["state"] == "running" and data["path"] == "700ms"
    assert "progressToken" in data["progressHint"]


def test_fast_calls_stay_quiet(sleepy: Server, project: Path) -> None:
    sleepy.legacy_init()
    sleepy.send(call(1, "lean_sync", sync_args(project, "Main.lean"), modern_meta=False))
    assert sleepy.read_until(1)[1] == []


def test_legacy_set_level_above_notice_suppresses_status(sleepy: Server, project: Path) -> None:
    sleepy.legacy_init()
    sleepy.ask(request(9, "logging/setLevel", {"level": "warning"}))
    sleepy.send(
        call(
            1,
            "lean_sync",
            sync_args(project, "500ms diag", diagnostic_scope="all"),
            modern_meta=False,
        )
    )
    _, before = sleepy.read_until(1)
    levels = [m["params"]["level"] for m in before]
    assert levels == ["error", "warning"]  # diagnostics still pass at warning, status does not


def test_modern_without_level_gets_no_logs(sleepy: Server, project: Path) -> None:
    sleepy.send(
        call(1, "lean_sync", sync_args(project, "500ms diag setup", diagnostic_scope="all"))
    )
    assert sleepy.read_until(1)[1] == []


def test_modern_notice_level_gets_status(sleepy: Server, project: Path) -> None:
    sleepy.send(call(1, "lean_sync", sync_args(project, "500ms"), log_level="notice"))
    _, before = sleepy.read_until(1)
    assert [m["params"]["logger"] for m in before] == ["beam.status"]
    # The level is request-local: the next modern request without one is quiet again.
    sleepy.send(call(2, "lean_sync", sync_args(project, "500ms")))
    assert sleepy.read_until(2)[1] == []


def test_setup_observation_triggers_status_at_once(sleepy: Server, project: Path) -> None:
    sleepy.send(call(1, "lean_sync", sync_args(project, "setup"), log_level="debug"))
    _, before = sleepy.read_until(1)
    (notice,) = before
    assert notice["params"]["data"]["state"] == "preparing_dependencies"


def test_diagnostic_levels_follow_the_matrix(sleepy: Server, project: Path) -> None:
    expected = {
        "debug": ["error", "warning", "info", "debug"],
        "info": ["error", "warning", "info"],
        "notice": ["error", "warning"],
        "error": ["error"],
        "critical": [],
    }
    for rid, (level, levels) in enumerate(expected.items()):
        args = sync_args(project, "diag", diagnostic_scope="all")
        sleepy.send(call(rid, "lean_sync", args, log_level=level))
        _, before = sleepy.read_until(rid)
        assert [m["params"]["level"] for m in before] == levels, level
        assert all(m["params"]["logger"] == "lean.diagnostic" for m in before)
    sleepy.send(call(99, "lean_sync", sync_args(project, "diag"), log_level="debug"))
    _, before = sleepy.read_until(99)
    assert [m["params"]["level"] for m in before] == ["error"]  # default scope: errors


def test_drop_reports_preparation_before_waiting(sleepy: Server, project: Path) -> None:
    sleepy.send(
        call(
            1,
            "lean_drop_workspace",
            {"workspace": {"root": str(project)}},
            call_meta={"progressToken": "d"},
        )
    )
    _, before = sleepy.read_until(1)
    assert before and before[0]["params"]["progress"] == 1
    assert "eviction" in before[0]["params"]["message"]
