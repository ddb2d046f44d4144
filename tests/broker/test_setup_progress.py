"""Lake setup lines of a fresh workspace become progress updates or one ``beam.status`` notice.

The fake runs as if under ``lake serve`` (``FAKE_LEAN_UNDER_LAKE``): opening a file with local
imports first publishes Lake's build lines (``✔ [i/n] Built M``), as ``lake setup-file`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.broker.fake import fake_server, workspace
from tests.mcp.helpers import Server, call

UNDER_LAKE = {"FAKE_LEAN_UNDER_LAKE": "1", "FAKE_LEAN_SETUP_DELAY_MS": "20"}


@pytest.fixture
def importing(project: Path) -> Path:
    (project / "A.lean").write_text("def a : Nat := 1\n")
    (project / "B.lean").write_text("def b : Nat := 2\n")
    (project / "Main.lean").write_text("import A\nimport B\ndef c : Nat := a + b\n")
    return project


def _sync(rid: int, root: Path, **options: Any) -> dict:
    return call(rid, "lean_sync", {**workspace(root), "path": "Main.lean"}, **options)


def _notifications(before: list[dict], method: str) -> list[dict]:
    return [m["params"] for m in before if m.get("method") == method]


def test_setup_progress_with_a_token(servers: list[Server], importing: Path) -> None:
    server = fake_server(servers, **UNDER_LAKE)
    server.send(_sync(1, importing, call_meta={"progressToken": "setup"}))
    reply, before = server.read_until(1)
    assert reply["result"]["isError"] is False, reply
    progress = _notifications(before, "notifications/progress")
    assert all(p["progressToken"] == "setup" for p in progress)
    assert [p["progress"] for p in progress] == list(range(1, len(progress) + 1))
    messages = [p["message"] for p in progress]
    assert messages[0] == "lean_sync on Main.lean: preparing the Lean workspace"
    setup = [i for i, m in enumerate(messages) if "preparing Lean dependencies" in m]
    assert setup and "✔ [1/3] Built A" in messages[setup[0]], messages
    # Lean announces the whole file at didOpen, so only the end is ordered after the setup.
    assert sum("done=true" in m for m in messages) == 1 and "done=true" in messages[-1]
    assert setup[-1] < len(messages) - 1
    assert _notifications(before, "notifications/message") == []  # no log level, no logs


def test_legacy_default_level_gets_one_setup_notice(servers: list[Server], importing: Path) -> None:
    server = fake_server(servers, **UNDER_LAKE)
    server.legacy_init()
    server.send(_sync(1, importing, modern_meta=False))
    reply, before = server.read_until(1)
    assert reply["result"]["isError"] is False, reply
    assert _notifications(before, "notifications/progress") == []
    (notice,) = _notifications(before, "notifications/message")
    assert (notice["level"], notice["logger"]) == ("notice", "beam.status")
    data = notice["data"]
    assert (data["requestId"], data["tool"], data["path"]) == (1, "lean_sync", "Main.lean")
    assert data["state"] == "preparing_dependencies"
    assert "progressToken" in data["progressHint"]


def test_modern_request_without_log_level_stays_quiet(
    servers: list[Server], importing: Path
) -> None:
    server = fake_server(servers, **UNDER_LAKE)
    server.send(_sync(1, importing))
    reply, before = server.read_until(1)
    assert reply["result"]["isError"] is False, reply
    assert before == []
    # The same request admitting notice gets the setup notice (a second fresh document).
    (importing / "Other.lean").write_text("import A\ndef d : Nat := a\n")
    args = {**workspace(importing), "path": "Other.lean"}
    server.send(call(2, "lean_sync", args, log_level="notice"))
    reply, before = server.read_until(2)
    assert [m["params"]["data"]["state"] for m in before] == ["preparing_dependencies"]
