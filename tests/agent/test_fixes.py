"""Errors that name the fix, and the rough edges a new agent hit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.broker.fake import FAKE_CMD, FAST_FAKE, err, fake_server, ok, workspace
from tests.mcp.helpers import REPO, Server, call, minimal_env, structured

SORRY_FILE = "def answerA : Nat := 42\n\ntheorem two : 1 + 1 = 2 := by\n  sorry\n"


def test_stale_version_names_both_versions_the_right_way_round(
    servers: list[Server], project: Path
) -> None:
    server = fake_server(servers)
    synced = ok(server, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    current = synced["version"]
    at = {**workspace(project), "path": "Main.lean", "line": 0, "character": 4}
    stale = err(server, 2, "lean_hover", {**at, "version": current + 98})
    assert stale["code"] == "contentModified"
    assert stale["message"] == f"version {current + 98} is stale: Main.lean is at version {current}"
    data = stale["data"]
    assert data["reason"] == "documentVersionMismatch"
    assert data["expectedVersion"] == current + 98 and data["currentVersion"] == current
    assert data["uri"] == (project / "Main.lean").as_uri()
    assert f"lean_sync on Main.lean and pass version {current}" in data["fix"]


def test_every_tool_error_carries_a_fix(servers: list[Server], project: Path) -> None:
    server = fake_server(servers)
    base = {**workspace(project), "path": "Main.lean"}
    calls = [
        ("lean_hover", {**base, "line": "0", "character": 0}),  # invalidInput (validation)
        ("lean_hover", {**base, "path": "Nope.lean", "line": 0, "character": 0}),
        ("lean_hover", {**base, "line": 40, "character": 0}),  # invalidParams
        ("lean_hover", {**base, "line1": 1, "match": "absent"}),  # noMatch
        ("lean_goals", {**base, "line": 0, "character": 0, "mode": "before"}),
        ("lean_hover", {**base, "version": 77, "line": 0, "character": 0}),
        ("lean_release", {**base, "handle": {"id": "gone"}}),
        ("lean_sync", {"workspace": {"root": str(project / "missing")}, "path": "Main.lean"}),
    ]
    for rid, (tool, arguments) in enumerate(calls, start=1):
        reply = server.ask(call(rid, tool, arguments))
        assert reply["result"]["isError"] is True, (tool, arguments, reply)
        fix = structured(reply)["data"]["fix"]
        assert isinstance(fix, str) and len(fix) > 10, (tool, arguments, fix)
    bare = Server(env=minimal_env())  # no way to start Lean: runtimeSetup
    servers.append(bare)
    setup = structured(bare.ask(call(1, "lean_sync", base)))
    assert setup["code"] == "runtimeSetup" and setup["data"]["fix"]


def test_runtime_setup_detail_is_text_not_a_python_repr(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    beam_cli = Path(sys.executable).with_name("beam-cli")
    home = tmp_path / "home"
    home.mkdir()
    server = Server(
        "--beam-cli",
        str(beam_cli),
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )
    servers.append(server)
    error = err(server, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    assert error["code"] == "runtimeSetup"
    detail = error["data"]["detail"]
    assert detail.startswith("searched: /usr/bin:/bin, "), detail
    assert "{'" not in detail and "['" not in detail


def test_todo_defaults_to_the_whole_file(servers: list[Server], project: Path) -> None:
    (project / "Main.lean").write_text(SORRY_FILE)
    server = fake_server(servers)
    found = ok(server, 1, "lean_todo", {**workspace(project), "path": "Main.lean"})
    assert found["range"] == {
        "start": {"line": 0, "character": 0},
        "end": {"line": 4, "character": 0},
    }
    sorry = [item for item in found["items"] if item["kind"] == "sorry"]
    assert [item["run_at_position"] for item in sorry] == [{"line": 3, "character": 2}]


def test_todo_code_actions_carry_their_own_range(servers: list[Server], project: Path) -> None:
    (project / "Main.lean").write_text(SORRY_FILE)
    server = fake_server(servers)
    synced = ok(server, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    args = {
        **workspace(project),
        "path": "Main.lean",
        "version": synced["version"],
        "start_line": 0,
        "start_character": 0,
        "end_line": 4,
        "end_character": 0,
        "kinds": ["code_action"],
    }
    found = ok(server, 2, "lean_todo", args)
    sorry_at = {"line": 3, "character": 2}
    [action] = found["items"]
    assert action["run_at_position"] == sorry_at  # not the 0:0 the query started at
    assert action["range"] == {"start": sorry_at, "end": {"line": 3, "character": 7}}


def test_self_check_says_how_many_errors_in_words(project: Path) -> None:
    (project / "Main.lean").write_text("def x : Nat := foo\n")
    done = subprocess.run(
        [sys.executable, "-m", "beam_mcp", "--lean-cmd", FAKE_CMD, "--self-check", "Main.lean"],
        capture_output=True,
        text=True,
        env=minimal_env(**FAST_FAKE),
        cwd=str(project),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert "lean_sync: synced: 1 error (version 1)" in done.stdout
    assert "errors" not in done.stdout.split("lean_sync:")[1].splitlines()[0]
