"""How often a call leaves the event loop: one trip to a reading thread per call on an unchanged
file, whatever the tool (the workspace root's check rides along with the file's; a tool that
names no file makes that one trip for the root alone).

Every trip ends with the pool thread waking the event loop through its self-pipe
(``call_soon_threadsafe``: one ``send`` of a single NUL byte); ``strace -f`` on the real server
counts those wake-ups over a run of calls.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.broker.conftest import servers
from tests.broker.fake import FAKE_CMD, FAST_FAKE, err, fake_server, ok, workspace
from tests.mcp.helpers import Server, minimal_env
from tests.support.projects import lean_project


@pytest.fixture(autouse=True)
def _in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests watch the MCP server's own process (its trips off the loop, its children, its
    system calls): they run it with the broker in-process. The shared host has its own tests
    in tests/host."""
    monkeypatch.setenv("LEAN_BEAM_HOST", "off")


__all__ = ["servers"]

CALLS = 20


def _traced(servers: list[Server], trace: Path) -> Server:
    strace = shutil.which("strace")
    if strace is None:
        if os.environ.get("CI") == "true":
            pytest.fail("strace is missing: CI installs it to count the server's thread trips")
        pytest.skip("needs strace to count the server's thread trips")
    prefix = [strace, "-f", "-qq", "-e", "trace=sendto", "-o", str(trace)]
    server = Server("--lean-cmd", FAKE_CMD, env=minimal_env(**FAST_FAKE), prefix=prefix)
    servers.append(server)
    return server


def _wakeups(trace: Path) -> int:
    """The loop's self-pipe wake-ups so far: `send`s of one NUL byte."""
    return sum('"\\0", 1,' in line for line in trace.read_text().splitlines())


@pytest.mark.parametrize(
    "tool",
    ["lean_hover", "lean_update", "lean_sync", "lean_document_symbols", "lean_workspace_symbols"],
)
def test_a_call_on_an_unchanged_file_leaves_the_loop_once(
    servers: list[Server], project: Path, tmp_path: Path, tool: str
) -> None:
    trace = tmp_path / "server.trace"
    server = _traced(servers, trace)
    args = {**workspace(project), "path": "Main.lean"}
    if tool == "lean_hover":
        args.update(line=0, character=4)
    if tool == "lean_workspace_symbols":  # names no file: the root's check alone leaves the loop
        args = {**workspace(project), "query": "answer"}
    for rid in (1, 2):  # the session starts, the root and the file are resolved once
        ok(server, rid, tool, args)
    before = _wakeups(trace)
    for rid in range(10, 10 + CALLS):
        ok(server, rid, tool, args)
    trips = _wakeups(trace) - before
    assert trips <= CALLS, f"{trips} trips off the loop for {CALLS} calls of {tool}"


# What remembering costs nothing in correctness: a remembered root or file name is checked again
# inside the call's trip, and a call on one that moved answers for where it leads now.


def _retarget(link: Path, target: Path) -> None:
    staged = link.with_name(link.name + ".tmp")
    staged.symlink_to(target)
    os.replace(staged, link)


def test_a_root_whose_link_is_retargeted_answers_for_the_new_project(
    servers: list[Server], tmp_path: Path
) -> None:
    alpha = lean_project(tmp_path / "alpha", {"Main.lean": "def alpha : Nat := 1\n"})
    bravo = lean_project(tmp_path / "bravo", {"Main.lean": "def bravo : Nat := 2\n"})
    link = tmp_path / "current"
    link.symlink_to(alpha)
    server = fake_server(servers)
    at = {**workspace(link), "path": "Main.lean", "line": 0, "character": 5}
    first = ok(server, 1, "lean_hover", at)
    assert first["workspace"]["root"] == str(alpha) and "alpha" in str(first), first
    _retarget(link, bravo)
    for rid, tool in enumerate(["lean_hover", "lean_update", "lean_sync"], start=2):
        args = at if tool == "lean_hover" else {**workspace(link), "path": "Main.lean"}
        again = ok(server, rid, tool, args)
        assert again["workspace"]["root"] == str(bravo), (tool, again)
    assert "bravo" in str(ok(server, 9, "lean_hover", at))
    roots = {w["root"] for w in ok(server, 10, "beam_stats", {})["workspaces"]}
    assert roots == {str(alpha), str(bravo)}, roots


@pytest.mark.parametrize("change", ["not a project", "removed"])
def test_a_remembered_root_that_is_no_longer_a_project_is_refused(
    servers: list[Server], project: Path, change: str
) -> None:
    server = fake_server(servers)
    args = {**workspace(project), "path": "Main.lean"}
    ok(server, 1, "lean_update", args)
    if change == "removed":
        shutil.rmtree(project)
    else:
        for marker in ("lean-toolchain", "lakefile.toml"):
            (project / marker).unlink()
    error = err(server, 2, "lean_update", args)
    reason = "notFound" if change == "removed" else "notLeanProject"
    assert error["code"] == "invalidInput" and error["data"]["reason"] == reason, error


def test_lean_update_follows_a_retargeted_file_link(servers: list[Server], project: Path) -> None:
    (project / "A.lean").write_text("def alpha : Nat := 1\n")
    (project / "B.lean").write_text("def bravo : Nat := 2\n")
    link = project / "Link.lean"
    link.symlink_to("A.lean")
    server = fake_server(servers)
    args = {**workspace(project), "path": "Link.lean"}
    ok(server, 1, "lean_update", args)
    assert ok(server, 2, "lean_update", args)["changed"] is False
    _retarget(link, project / "B.lean")
    assert ok(server, 3, "lean_update", args)["changed"] is True  # B.lean, opened now
    at = {**args, "line": 0, "character": 5}
    assert "bravo" in str(ok(server, 4, "lean_hover", at))
