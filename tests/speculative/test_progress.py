"""Progress of a speculative probe: file progress of its scratch document, named as the source."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.helpers import Server, call, structured
from tests.speculative.helpers import Probe, fake_server

PROOF = "def answerA : Nat := 42\ntheorem t : True := by\n  trivial\n"


def test_run_at_progress_names_the_source_only(servers: list[Server], project: Path) -> None:
    (project / "Main.lean").write_text(PROOF)
    p = Probe(fake_server(servers), project)
    p.ok("lean_sync", {"path": "Main.lean"})  # so that all file progress below is the probe's
    # `sleep 300` makes the scratch document's elaboration slow enough for Lean to report it.
    args = {
        **p.ws,
        "path": "Main.lean",
        "version": p.version,
        "line": 2,
        "character": 2,
        "text": "sleep 300\ntrivial",
    }
    p.server.send(call(900, "lean_run_at", args, call_meta={"progressToken": 9}, log_level="debug"))
    reply, before = p.server.read_until(900)
    result = structured(reply)
    assert result["success"] is True and result["proof_state"] == {"goals": []}
    p.untouched()
    progress = [m["params"] for m in before if m.get("method") == "notifications/progress"]
    assert [m.get("method") for m in before] == ["notifications/progress"] * len(progress)
    assert [q["progress"] for q in progress] == list(range(1, len(progress) + 1))
    assert all(q["progressToken"] == 9 for q in progress)
    messages = [q["message"] for q in progress]
    assert messages[0] == "lean_run_at on Main.lean: preparing the Lean workspace"
    files = [m for m in messages[1:] if m.startswith("lean_run_at: process")]
    assert files and all("Main.lean (range=" in m for m in files), messages
    assert "done=false" in files[0], messages  # the slow probe, not an already finished file
    assert sum("done=true" in m for m in files) <= 1
    # Nothing the client ever saw names a scratch document.
    written = b"".join(p.server.raw)
    assert b"beam-scratch" not in written and b".Main." not in written
