"""A scripted agent session: every answer within the client's patience,
positions named the way a model names them, and every text compact and under the byte budget.

The agent syncs a slow file with a 2 s ``wait_ms``, polls until Lean is done (the polls join the
one barrier already running), addresses a ``sorry`` by its declaration, probes it and reads
goals there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.broker.fake import fake_server, request_log, workspace
from tests.mcp.helpers import Server, call

BUDGET = 20_000
SLOW = """namespace Demo

theorem slow : True := by
  sleep 5000
  trivial

theorem pending (p q : Prop) (hp : p) (hq : q) : p ∧ q := by
  constructor
  · exact hp
  · sorry

end Demo
"""
BIG = "".join(f"def e{n} : Nat := missing{n}\n" for n in range(400))


class Agent:
    """What a model sees of each call: the text of ``content[0]``, decoded."""

    def __init__(self, server: Server, root: Path) -> None:
        self.server = server
        self.base = workspace(root)
        self.rid = 0
        self.texts: list[str] = []

    def call(self, tool: str, **arguments: Any) -> tuple[bool, dict[str, Any]]:
        self.rid += 1
        reply = self.server.ask(call(self.rid, tool, {**self.base, **arguments}))
        text = reply["result"]["content"][0]["text"]
        self.texts.append(text)
        body: dict[str, Any] = json.loads(text)
        assert body == reply["result"]["structuredContent"]
        return reply["result"]["isError"], body

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        failed, body = self.call(tool, **arguments)
        assert not failed, body
        return body


def test_agent_session(servers: list[Server], project: Path, tmp_path: Path) -> None:
    (project / "Main.lean").write_text(SLOW)
    (project / "Big.lean").write_text(BIG)
    log = tmp_path / "requests.jsonl"
    agent = Agent(fake_server(servers, FAKE_LEAN_REQUEST_LOG=str(log)), project)

    first = agent.ok("lean_sync", path="Main.lean", wait_ms=2000)
    assert first["readiness"]["save_ready"] is False
    assert first["readiness"]["reason"] == "stillElaborating"
    assert first["diagnostics"]["complete"] is False
    assert first["document_progress"]["done"] is False
    assert first["retry_after_ms"] > 0
    version = first["version"]

    # a position tool on code Lean has not reached yet answers timeout, and says when to retry
    failed, late = agent.call("lean_hover", path="Main.lean", line1=9, match="exact", wait_ms=200)
    assert failed and late["code"] == "timeout"
    assert set(late["data"]) >= {"phase", "waited_ms", "retry_after_ms", "fix"}
    failed, probe_late = agent.call(
        "lean_run_at", path="Main.lean", line1=9, match="exact", text="skip", wait_ms=200
    )
    assert failed and probe_late["code"] == "timeout"
    assert probe_late["data"]["waited_ms"] == 200 and probe_late["data"]["retry_after_ms"] > 0

    synced = first
    for _ in range(20):
        if synced["diagnostics"]["complete"]:
            break
        synced = agent.ok("lean_sync", path="Main.lean", wait_ms=2000)
    assert synced["diagnostics"]["complete"] is True
    assert synced["version"] == version
    assert synced["readiness"]["reason"] == "ok"
    assert synced["diagnostics"]["counts"]["warning"] == 1  # the sorry
    waits = [e for e in request_log(log) if e.get("request") == "textDocument/waitForDiagnostics"]
    assert len(waits) == 1  # every poll joined the barrier the first call started

    todo = agent.ok("lean_todo", path="Main.lean", kinds=["sorry"])
    [item] = todo["items"]
    probe = agent.ok(
        "lean_run_at", path="Main.lean", declaration="Demo.pending", sorry=1, text="exact hq"
    )
    assert probe["position"] == item["run_at_position"] == {"line": 9, "character": 4}
    assert probe["version"] == version and probe["success"] is True
    goals = agent.ok("lean_goals", path="Main.lean", declaration="pending", sorry=1, mode="before")
    assert goals["position"] == probe["position"]
    [goal] = goals["goals"]
    assert "q" in goal["target"] and "⊢" not in json.dumps(goal, ensure_ascii=True)
    hover = agent.ok("lean_hover", path="Main.lean", line1=7, match="pending")
    assert hover["position"] == {"line": 6, "character": 8}

    big = agent.ok("lean_sync", path="Big.lean", diagnostics_in_result=True)
    assert big["diagnostics"]["counts"]["error"] == 400
    kept = len(big["diagnostics"]["items"])
    blocking = len(big["readiness"]["blocking_diagnostics"])
    assert 0 < kept < 400 and 0 < blocking < 400
    assert big["truncated"] == {
        "diagnostics.items": 400 - kept,
        "readiness.blocking_diagnostics": 400 - blocking,
    }

    for text in agent.texts:
        assert len(text.encode("utf-8")) <= BUDGET
        assert "\\u" not in text
    assert any("∧" in text for text in agent.texts)  # non-ASCII written as itself
