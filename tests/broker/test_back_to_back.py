"""Two documents of one workspace opened back to back, on a fresh session each round.

Regression loop for a hang seen about once in ten runs: the second `lean_update` never got an
answer because its `didOpen` never reached Lean. Each round starts a new session (drop), opens
two files one right after the other (odd rounds: both calls in flight at once), and checks
that both are answered and that Lean has both documents (a sync of each returns).
"""

from __future__ import annotations

from pathlib import Path

from tests.broker.fake import fake_server, workspace
from tests.mcp.helpers import Server, call, structured

ROUNDS = 16
FILES = ("Main.lean", "Other.lean")


def _answers(server: Server, messages: list[dict]) -> list[dict]:
    server.send(*messages)
    wanted = {message["id"] for message in messages}
    answers: dict[int, dict] = {}
    while wanted - answers.keys():
        message = server.read()  # bounded by the helper's wait
        if message.get("id") in wanted and "method" not in message:
            answers[message["id"]] = message
    return [structured(answers[message["id"]]) for message in messages]


def test_two_documents_back_to_back(servers: list[Server], project: Path) -> None:
    server = fake_server(servers)
    ws = workspace(project)
    (project / "Other.lean").write_text("def answerB : Nat := 7\n")
    rid = 0
    for round_ in range(ROUNDS):
        updates = []
        for path in FILES:
            rid += 1
            updates.append(call(rid, "lean_update", {**ws, "path": path}))
        if round_ % 2:
            results = _answers(server, updates)
        else:
            results = [_answers(server, [update])[0] for update in updates]
        for result in results:
            assert result.get("changed") is True, (round_, result)
        syncs = []
        for path in FILES:  # a barrier answers only once Lean has the document
            rid += 1
            syncs.append(call(rid, "lean_sync", {**ws, "path": path}))
        for result in _answers(server, syncs):
            assert result["diagnostics"]["counts"]["total"] == 0, (round_, result)
        rid += 1
        (dropped,) = _answers(server, [call(rid, "lean_drop_workspace", ws)])
        assert dropped["dropped"] is True, (round_, dropped)
