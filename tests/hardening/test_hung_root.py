"""A workspace root on a mount whose stats never return: canonicalizing the root
runs off the event loop and bounded too, so the call naming it is a timeout tool error while
calls on other workspaces and other requests are answered."""

from __future__ import annotations

from pathlib import Path

from tests.broker.fake import fake_server, ok, workspace
from tests.mcp.helpers import Server, call, modern, structured
from tests.support.projects import lean_project
from tests.support.slowfs import slow_mount


def test_a_hung_workspace_root_is_a_tool_error(servers: list[Server], tmp_path: Path) -> None:
    source = tmp_path / "source"
    lean_project(source / "stuck", {"Main.lean": "def stuck : Nat := 1\n"})
    healthy = lean_project(tmp_path / "healthy", {"Main.lean": "def answerA : Nat := 42\n"})
    with slow_mount(source, tmp_path / "mnt", hang_stat=("stuck",)) as mount:
        server = fake_server(servers, BEAM_READ_TIMEOUT_S="1.5")
        ok(server, 1, "lean_sync", {**workspace(healthy), "path": "Main.lean"})
        server.send(call(2, "lean_sync", {**workspace(mount / "stuck"), "path": "Main.lean"}))
        server.send(call(3, "lean_hover", {**workspace(healthy), "path": "Main.lean",
                                           "line": 0, "character": 4}))  # fmt: skip
        server.send(modern(4, "tools/list"))
        order: list[int] = []
        answers: dict[int, dict] = {}
        while len(answers) < 3:
            msg = server.read(timeout=60)
            if msg.get("id") in (2, 3, 4) and "method" not in msg:
                answers[msg["id"]] = msg
                order.append(msg["id"])
        assert order[-1] == 2, order
        error = structured(answers[2])
        assert answers[2]["result"]["isError"], error
        assert error["code"] == "timeout" and error["data"]["phase"] == "read", error
        assert "stuck" in error["message"] and error["data"]["fix"], error
        assert not answers[3]["result"]["isError"], answers[3]
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        while server.lines.get(timeout=20):
            pass  # EOF on stdout although a thread is still stuck in the kernel
    assert server.proc.wait(timeout=30) == 0


def test_a_remembered_root_that_hangs_later_is_a_tool_error(
    servers: list[Server], tmp_path: Path
) -> None:
    """The server remembers a canonical root and checks it again inside the call's read; when
    the root now leads onto a stuck mount, that read gives up in time and nothing stalls."""
    source = tmp_path / "source"
    lean_project(source / "stuck", {"Main.lean": "def stuck : Nat := 1\n"})
    healthy = lean_project(tmp_path / "healthy", {"Main.lean": "def answerA : Nat := 42\n"})
    other = lean_project(tmp_path / "other", {"Main.lean": "def other : Nat := 7\n"})
    link = tmp_path / "current"
    link.symlink_to(healthy)
    with slow_mount(source, tmp_path / "mnt", hang_stat=("stuck",)) as mount:
        server = fake_server(servers, BEAM_READ_TIMEOUT_S="1.5")
        at = {**workspace(link), "path": "Main.lean", "line": 0, "character": 4}
        ok(server, 1, "lean_hover", at)
        ok(server, 2, "lean_hover", at)  # the root is remembered now
        staged = tmp_path / "current.tmp"
        staged.symlink_to(mount / "stuck")
        staged.replace(link)
        server.send(call(3, "lean_hover", at))
        server.send(call(4, "lean_sync", {**workspace(other), "path": "Main.lean"}))
        server.send(modern(5, "tools/list"))
        order: list[int] = []
        answers: dict[int, dict] = {}
        while len(answers) < 3:
            msg = server.read(timeout=60)
            if msg.get("id") in (3, 4, 5) and "method" not in msg:
                answers[msg["id"]] = msg
                order.append(msg["id"])
        assert order[-1] == 3, order
        error = structured(answers[3])
        assert answers[3]["result"]["isError"], error
        assert error["code"] == "timeout" and error["data"]["phase"] == "read", error
        assert not answers[4]["result"]["isError"], answers[4]
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        while server.lines.get(timeout=20):
            pass
    assert server.proc.wait(timeout=30) == 0
