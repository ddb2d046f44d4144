"""Progress notifications, live diagnostics and cancellation through the stdio server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.broker.fake import fake_server, request_log, until, workspace
from tests.mcp.helpers import Server, call, structured


def test_progress_and_live_diagnostics(servers: list[Server], project: Path) -> None:
    (project / "Main.lean").write_text("def x : Nat := foo\ndef y : Nat := 1\n")
    server = fake_server(servers)
    args = {**workspace(project), "path": "Main.lean", "diagnostic_scope": "all"}
    message = call(1, "lean_sync", args, call_meta={"progressToken": "p1"})
    message["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = "debug"
    server.send(message)
    reply, before = server.read_until(1)
    assert reply["result"]["isError"] is False
    progress = [m["params"] for m in before if m.get("method") == "notifications/progress"]
    assert progress[0]["message"] == "lean_sync on Main.lean: preparing the Lean workspace"
    assert [p["progress"] for p in progress] == list(range(1, len(progress) + 1))
    done = [p for p in progress if "done=true" in p["message"]]
    assert len(done) <= 1
    logs = [m["params"] for m in before if m.get("method") == "notifications/message"]
    diagnostics = [log for log in logs if log["logger"] == "lean.diagnostic"]
    assert diagnostics and diagnostics[0]["level"] == "error"
    assert diagnostics[0]["data"]["path"] == "Main.lean"
    assert structured(reply)["document_progress"]["done"] is True


def test_cancelled_hover_frees_the_document(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    (project / "Slow.lean").write_text("example : True := by\n  sleep 600000\n  trivial\n")
    server = fake_server(servers, FAKE_LEAN_REQUEST_LOG=str(log))
    ws = workspace(project)
    opened = server.ask(call(1, "lean_update", {**ws, "path": "Slow.lean"}))
    version = structured(opened)["version"]
    hover = {**ws, "path": "Slow.lean", "version": version, "line": 2, "character": 2}
    server.send(call(2, "lean_hover", hover))
    until(
        lambda: [e for e in request_log(log) if e.get("request") == "textDocument/hover"],
        "the hover to reach Lean",
    )
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
    # The cancelled call gets no answer; the next call on the same document is not blocked.
    server.send(call(3, "lean_close", {**ws, "path": "Slow.lean"}))
    closed, before = server.read_until(3)
    assert structured(closed)["closed"] is True
    assert all(m.get("id") != 2 for m in before)


def test_cancellation_reaches_lean(servers: list[Server], project: Path, tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    (project / "Slow.lean").write_text(
        "def answerA : Nat := 42\nexample : True := by\n  sleep 600000\n  trivial\n"
    )
    server = fake_server(servers, FAKE_LEAN_REQUEST_LOG=str(log))
    ws = workspace(project)
    version = structured(server.ask(call(1, "lean_update", {**ws, "path": "Slow.lean"})))["version"]
    slow = {**ws, "path": "Slow.lean", "version": version, "line": 3, "character": 2}
    server.send(call(2, "lean_hover", slow))
    hovers = until(
        lambda: [e["id"] for e in request_log(log) if e.get("request") == "textDocument/hover"],
        "the hover to reach Lean",
    )
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
    cancelled = until(
        lambda: [e["cancel"] for e in request_log(log) if "cancel" in e], "a $/cancelRequest"
    )
    assert cancelled == hovers  # exactly the LSP id of the cancelled hover, once
    # The cancelled call gets no answer; the next call on the same document is answered.
    fast = {**ws, "path": "Slow.lean", "version": version, "line": 0, "character": 4}
    server.send(call(3, "lean_hover", fast))
    answered, before = server.read_until(3)
    assert "answerA : Nat" in json.dumps(structured(answered))
    assert all(m.get("id") != 2 for m in before + server.quiet(0.3))
