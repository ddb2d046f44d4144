"""The workspace cap and the idle reaper, observed through ``beam_stats`` and the process table.

Every process of a session (the fake server and its file workers, which call ``setsid``) runs
in the workspace root, so ``fake_processes`` finds them all.
"""

from __future__ import annotations

from pathlib import Path

from tests.broker.fake import fake_processes, fake_server, until, workspace
from tests.mcp.helpers import Server, call, structured

DEFAULT_CAP = 8


def _root(base: Path, name: str) -> Path:
    root = base / name
    root.mkdir()
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "lakefile.toml").write_text(f'name = "{name}"\n')
    (root / "Main.lean").write_text("def answerA : Nat := 42\n")
    return root.resolve()


def _sessions(server: Server, rid: int) -> dict[str, dict]:
    stats = structured(server.ask(call(rid, "beam_stats")))
    return {w["root"]: w["session"] for w in stats["workspaces"] if w["session"]}


def _hover(server: Server, rid: int, root: Path) -> None:
    """Open Main.lean of ``root`` and hover in it (ids ``rid`` and ``rid + 100``)."""
    path = {**workspace(root), "path": "Main.lean"}
    version = structured(server.ask(call(rid + 100, "lean_update", path)))["version"]
    args = {**path, "version": version, "line": 0, "character": 4}
    reply = server.ask(call(rid, "lean_hover", args))
    assert reply["result"]["isError"] is False, reply
    assert "answerA : Nat" in str(structured(reply))


def test_cap_closes_the_least_recently_used_session(servers: list[Server], tmp_path: Path) -> None:
    roots = [_root(tmp_path, f"w{i}") for i in range(DEFAULT_CAP + 1)]
    # The cap counts the sessions of one server process: with shared hosts each workspace has
    # a process of its own (docs/HOST.md), so this is the in-process broker's rule.
    server = fake_server(servers, LEAN_BEAM_HOST="off")
    for rid, root in enumerate(roots[:DEFAULT_CAP], start=1):
        _hover(server, rid, root)
    _hover(server, 20, roots[0])  # roots[1] is now the least recently used
    assert all(fake_processes(root) for root in roots[:DEFAULT_CAP])
    _hover(server, 21, roots[DEFAULT_CAP])
    sessions = _sessions(server, 22)
    assert set(sessions) == {str(r) for r in roots} - {str(roots[1])}
    until(lambda: not fake_processes(roots[1]), "the evicted session's processes to end")
    assert fake_processes(roots[0]) and sessions[str(roots[0])]["epoch"] == 1
    # The evicted root comes back transparently, in a new session; the next LRU root makes room.
    _hover(server, 23, roots[1])
    sessions = _sessions(server, 24)
    assert sessions[str(roots[1])]["epoch"] == 2 and fake_processes(roots[1])
    assert str(roots[2]) not in sessions and len(sessions) == DEFAULT_CAP
    until(lambda: not fake_processes(roots[2]), "the next evicted session's processes to end")


def test_idle_timeout_reaps_the_session(servers: list[Server], project: Path) -> None:
    server = fake_server(servers, LEAN_BEAM_MCP_IDLE_TIMEOUT_MS="300")
    _hover(server, 1, project)
    assert fake_processes(project)
    until(lambda: not _sessions(server, 2), "the idle session to be reaped")
    until(lambda: not fake_processes(project), "the reaped session's processes to end")
    _hover(server, 3, project)
    assert _sessions(server, 4)[str(project)]["epoch"] == 2
