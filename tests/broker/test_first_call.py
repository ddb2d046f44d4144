"""What a first Lean call loads, and what the Lean server it starts inherits.

Read from ``/proc/<pid>/maps`` (which shared libraries the server mapped) and
``/proc/<pid>/environ`` of the fake Lean server, through a real server against the fake.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.broker.fake import err, fake_server, ok, workspace
from tests.mcp.helpers import Server


def _mapped(pid: int, library: str) -> bool:
    return library in Path(f"/proc/{pid}/maps").read_text()


def test_a_first_lean_call_loads_neither_pydantic_nor_psutil_nor_hashlib(
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
    assert not _mapped(server.proc.pid, "/_hashlib."), "a digest nobody asked for loaded hashlib"
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


# What the server imports for a first `lean_hover` / `lean_sync` (phase 2, the broker, the
# queries and document tools), and modules only other tools or error paths need.
FIRST_CALL_MODULES = (
    "beam_mcp.aserver",
    "beam_mcp.lean",
    "beam_runtime.broker.queries.queries",
    "beam_runtime.broker.operations",
)
NOT_ON_A_FIRST_CALL = (
    "hashlib",  # digests: scratch documents and lean_save
    "beam_runtime.broker.session.header",  # the import header: verify, recovery plans, freshness
    "beam_runtime.search.scan",  # the header's comment scanner, and search
    "anyio.streams.buffered",  # the LSP frame reader off asyncio
    "pydantic",
    "psutil",
    "shutil",  # and the compression modules it loads
)


def test_the_modules_of_a_first_call_leave_the_rest_unloaded() -> None:
    probe = (
        "import importlib, sys\n"
        f"for name in {FIRST_CALL_MODULES!r}:\n"
        "    importlib.import_module(name)\n"
        f"print([name for name in {NOT_ON_A_FIRST_CALL!r} if name in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "[]", done.stdout
