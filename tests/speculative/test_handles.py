"""Handles: continuation, consumption, release, and every way a handle goes stale."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.helpers import Server
from tests.speculative.helpers import HANDLE_ID, Probe, fake_server, targets

PROOF = (
    "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
    "  constructor\n"
    "  exact hp\n"
    "def after : Nat := 1\n"
)


def probe(servers: list[Server], project: Path) -> Probe:
    (project / "Main.lean").write_text(PROOF)
    (project / "Other.lean").write_text("def other : Nat := 2\n")
    return Probe(fake_server(servers), project)


def test_continuations_keep_or_consume_their_parent(servers: list[Server], project: Path) -> None:
    p = probe(servers, project)
    first = p.at(1, 2, "constructor", tool="lean_run_at_handle")
    handle = first["next_handle"]
    assert set(handle) == {"id"} and HANDLE_ID.match(handle["id"])
    left = p.with_(handle, "exact hp")
    assert targets(left) == ["q"] and left["next_handle"]["id"] != handle["id"]
    again = p.with_(handle, "exact hp")  # the parent is still there
    assert targets(again) == ["q"]
    done = p.with_(left["next_handle"], "exact hq")
    assert done["success"] is True and targets(done) == []
    surplus = p.with_(done["next_handle"], "trivial")
    assert surplus["success"] is False and surplus["next_handle"] is None
    assert [m["text"] for m in surplus["messages"]] == ["No goals to be solved"]
    wrong = p.with_(handle, "exact hq", linear=True)  # consumed even though it fails
    assert wrong["success"] is False and wrong["next_handle"] is None
    gone = p.with_error(handle)
    assert gone["code"] == "contentModified" and gone["data"]["reason"] == "consumed"
    released = p.ok("lean_release", {"path": "Main.lean", "handle": left["next_handle"]})
    assert released == {**p.ws, "result": None}
    twice = p.err("lean_release", {"path": "Main.lean", "handle": left["next_handle"]})
    assert twice["data"]["reason"] == "released"
    # a released parent does not take its children with it
    assert p.with_(done["next_handle"], "skip")["success"] is True
    p.untouched()


def test_command_handles_append_commands(servers: list[Server], project: Path) -> None:
    p = probe(servers, project)
    first = p.at(3, 0, "def probeA : Nat := 5", tool="lean_run_at_handle")
    assert first["proof_state"] is None
    second = p.with_(first["next_handle"], "#eval probeA")
    assert second["messages"] == [{"severity": "information", "text": "5"}]
    assert p.at(3, 0, "#eval probeA")["success"] is False  # nothing leaked into the document


def test_unknown_foreign_and_mismatched_handles(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    p = probe(servers, project)
    unknown = p.with_error({"id": "A" * 43})
    assert unknown["code"] == "contentModified" and unknown["data"]["reason"] == "unknownHandle"
    handle = p.at(1, 2, "constructor", tool="lean_run_at_handle")["next_handle"]
    elsewhere = p.err("lean_run_with", {"path": "Other.lean", "handle": handle, "text": "skip"})
    assert elsewhere["code"] == "invalidParams"
    other_root = tmp_path / "second"
    other_root.mkdir()
    (other_root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (other_root / "Main.lean").write_text(PROOF)
    foreign = p.reply(
        "lean_run_with",
        {
            "workspace": {"root": str(other_root.resolve())},
            "path": "Main.lean",
            "handle": handle,
            "text": "skip",
        },
        bare=True,
    )
    assert foreign["isError"] is True
    assert foreign["structuredContent"]["code"] == "invalidParams"
    assert p.with_(handle, "exact hp")["success"] is True  # still alive after the refusals


def test_edit_and_close_make_handles_stale(servers: list[Server], project: Path) -> None:
    p = probe(servers, project)
    handle = p.at(1, 2, "constructor", tool="lean_run_at_handle")["next_handle"]
    (project / "Main.lean").write_text(PROOF + "def more : Nat := 3\n")
    edited = p.with_error(handle)
    assert edited["code"] == "contentModified" and edited["data"]["reason"] == "sourceChanged"
    p.bytes = (project / "Main.lean").read_bytes()
    p.version = p.ok("lean_update", {"path": "Main.lean"})["version"]
    handle = p.at(1, 2, "constructor", tool="lean_run_at_handle")["next_handle"]
    p.ok("lean_close", {"path": "Main.lean"})
    closed = p.err("lean_release", {"path": "Main.lean", "handle": handle})
    assert closed["data"]["reason"] == "sourceChanged"


def test_a_new_version_retires_the_older_versions_handles_at_once(
    servers: list[Server], project: Path
) -> None:
    """An edit seen by any tool gives the file a new version, and every handle of an older
    version is dead from then on (`sourceChanged`), not only once it is next used: the count of
    `lean_drop_workspace` leaves it out and after the drop it still says `sourceChanged`. A handle
    of the new version, and one of another file, work on."""
    p = probe(servers, project)
    old = p.at(1, 2, "constructor", tool="lean_run_at_handle")["next_handle"]
    (project / "Other.lean").write_text("def other : Nat := 2\ndef tail : Nat := 3\n")
    elsewhere = Probe(p.server, project, "Other.lean")
    other = elsewhere.at(1, 0, "def probeA : Nat := 5", tool="lean_run_at_handle")["next_handle"]
    (project / "Main.lean").write_text(PROOF + "def more : Nat := 3\n")
    p.bytes = (project / "Main.lean").read_bytes()
    p.version = p.ok("lean_update", {"path": "Main.lean"})["version"]  # the edit is seen here
    current = p.at(1, 2, "constructor", tool="lean_run_at_handle")["next_handle"]
    assert targets(p.with_(current, "exact hp", linear=True)) == ["q"]  # consumed: one child
    assert elsewhere.with_(other, "#eval probeA")["success"] is True  # and one child here
    dropped = p.ok("lean_drop_workspace", {})
    assert dropped == {**p.ws, "dropped": True, "invalidated_handles": 3}  # not the old one
    gone = p.with_error(old)
    assert gone["code"] == "contentModified" and gone["data"]["reason"] == "sourceChanged"
    after = elsewhere.with_error(other)
    assert after["code"] == "contentModified" and after["data"]["reason"] == "workspaceDropped"


def test_drop_counts_and_invalidates(servers: list[Server], project: Path) -> None:
    p = probe(servers, project)
    first = p.at(1, 2, "constructor", tool="lean_run_at_handle")["next_handle"]
    p.with_(first, "exact hp")
    p.ok("lean_release", {"path": "Main.lean", "handle": first})
    live = p.at(1, 2, "skip", tool="lean_run_at_handle")["next_handle"]
    dropped = p.ok("lean_drop_workspace", {})
    assert dropped == {**p.ws, "dropped": True, "invalidated_handles": 2}
    after = p.with_error(live)
    assert after["code"] == "contentModified" and after["data"]["reason"] == "workspaceDropped"
    again = p.ok("lean_drop_workspace", {})
    assert again["invalidated_handles"] == 0


def test_session_restart_makes_handles_stale(servers: list[Server], project: Path) -> None:
    p = probe(servers, project)
    handle = p.at(1, 2, "constructor", tool="lean_run_at_handle")["next_handle"]
    (project / "Die.lean").write_text("#fake_die\n")
    died = p.err("lean_sync", {"path": "Die.lean"})
    assert died["code"] == "workerExited"
    restarted = p.with_error(handle)
    assert restarted["code"] == "contentModified"
    assert restarted["data"]["reason"] == "sessionRestarted"
    stats = p.stats()
    assert stats["workspaces"][0]["session"]["epoch"] == 2
