"""What a first Lean call loads, and what the Lean server it starts inherits (issue 17, item 3).

Read from ``/proc/<pid>/maps`` (which shared libraries the server mapped) and
``/proc/<pid>/environ`` of the fake Lean server, through a real server against the fake.
"""

from __future__ import annotations

from pathlib import Path

from tests.broker.fake import err, fake_server, ok, workspace
from tests.mcp.helpers import Server


def _mapped(pid: int, library: str) -> bool:
    return library in Path(f"/proc/{pid}/maps").read_text()


def test_a_first_lean_call_loads_neither_pydantic_nor_psutil(
    servers: list[Server], project: Path
) -> None:
    server = fake_server(servers)
    ok(server, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    ok(
        server,
        2,
        "lean_hover",
        {**workspace(project), "path": "Main.lean", "line": 0, "character": 4},
    )
    assert not _mapped(server.proc.pid, "pydantic_core"), "valid input loaded pydantic"
    assert not _mapped(server.proc.pid, "_psutil_linux"), "a live session loaded psutil"
    stats = ok(server, 3, "beam_stats", {})  # psutil now, for the process tree's memory
    assert stats["workspaces"][0]["session"]["rss_bytes"] > 0


def test_lean_does_not_inherit_the_plugin_switch(servers: list[Server], project: Path) -> None:
    server = fake_server(servers)
    bad = err(server, 1, "lean_sync", {**workspace(project), "path": 7})
    assert bad["code"] == "invalidInput"  # pydantic loaded, with plugin discovery off
    ok(server, 2, "lean_sync", {**workspace(project), "path": "Main.lean"})
    pid = ok(server, 3, "beam_stats", {})["workspaces"][0]["session"]["pid"]
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert not [e for e in environ if e.startswith(b"PYDANTIC_DISABLE_PLUGINS=")]
    assert any(e.startswith(b"LEAN_BEAM_LSP_SESSION=") for e in environ)
