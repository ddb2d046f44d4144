"""Bad paths while a Lean session is already running: the tools' own re-read rejects them."""

from __future__ import annotations

from pathlib import Path

from tests.broker.fake import fake_server, workspace
from tests.mcp.helpers import Server, call, structured


def _reply(server: Server, rid: int, tool: str, args: dict) -> dict:
    reply = server.ask(call(rid, tool, args))
    return {"isError": reply["result"]["isError"], **structured(reply)}


def _open_documents(server: Server, rid: int, project: Path) -> int:
    stats = _reply(server, rid, "beam_stats", {})
    (entry,) = [w for w in stats["workspaces"] if w["root"] == str(project)]
    return int(entry["session"]["open_documents"])


def test_bad_paths_with_a_live_session(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    server = fake_server(servers)
    ws = workspace(project)
    (project / "Bad.lean").write_text("def b : Nat := 2\n")
    (tmp_path / "Outside.lean").write_text("def o := 1\n")
    assert not _reply(server, 1, "lean_sync", {**ws, "path": "Main.lean"})["isError"]
    opened = _reply(server, 2, "lean_sync", {**ws, "path": "Bad.lean"})
    assert not opened["isError"]
    (project / "Bad.lean").write_bytes(b"def b := \xff\n")
    position = {"version": opened["version"], "line": 0, "character": 4}
    cases = [
        ("lean_hover", "../Outside.lean", position, "pathEscapesRoot"),
        ("lean_update", "Nope.lean", {}, "fileNotFound"),
        ("lean_sync", "Bad.lean", {}, "notUtf8"),
        ("lean_hover", "Bad.lean", position, "notUtf8"),
        ("lean_goals", "Bad.lean", {**position, "mode": "before"}, "notUtf8"),
        ("lean_refresh", "Bad.lean", {}, "notUtf8"),
        ("lean_close", "Bad.lean", {}, "notUtf8"),
    ]
    for rid, (tool, path, extra, reason) in enumerate(cases, start=10):
        error = _reply(server, rid, tool, {**ws, "path": path, **extra})
        assert error["isError"], (tool, path, error)
        assert error["code"] == "invalidInput" and error["data"]["reason"] == reason, error
    # nothing was closed or changed in Lean: both documents are still open
    assert _open_documents(server, 50, project) == 2
