"""Starting agents that share a host, and looking at hosts from outside."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil

from tests.broker.fake import FAKE_CMD, FAST_FAKE, ok, until, workspace
from tests.mcp.helpers import REPO, Server, minimal_env
from tests.support.hosts import host_processes

LEAN_BEAM = Path(sys.executable).with_name("lean-beam")


def agent(agents: list[Server], *flags: str, **env: str) -> Server:
    """One `lean-beam-mcp` on the fake Lean, in auto host mode unless told otherwise (also when
    the run says `LEAN_BEAM_HOST=off`: these tests are about the host)."""
    settings = {**FAST_FAKE, "LEAN_BEAM_HOST": "auto", **env}
    server = Server("--lean-cmd", FAKE_CMD, *flags, env=minimal_env(**settings))
    agents.append(server)
    return server


def lean_servers(root: Path) -> list[psutil.Process]:
    """The fake Lean language servers (`lake serve` stand-ins) running in ``root``."""
    found = []
    for process in psutil.process_iter(["cmdline", "cwd"]):
        try:
            command = " ".join(process.info["cmdline"] or [])
            here = "tests.fake_lean" in command and process.info["cwd"] == str(root)
            if here and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.Error:
            continue
    return found


def hosts_here() -> list[psutil.Process]:
    """The host processes of this test's socket directory."""
    return host_processes([os.environ["XDG_RUNTIME_DIR"]])


def sync(server: Server, rid: int, root: Path, path: str = "Main.lean") -> dict[str, Any]:
    return ok(server, rid, "lean_sync", {**workspace(root), "path": path})


def host_of(server: Server, rid: int, root: Path) -> dict[str, Any]:
    """The `host` object `beam_stats` shows for ``root``."""
    stats = ok(server, rid, "beam_stats", {})
    found = [w for w in stats["workspaces"] if w["root"] == str(root)]
    assert found, stats
    host: dict[str, Any] = found[0]["host"]
    return host


def lean_beam(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`lean-beam ...` of the test venv (no delegation), in this test's socket directory and
    with a HOME of the test's own: the hosts this machine's user runs (`~/.cache/beam/hosts`)
    are not the test's to list, count or stop."""
    home = Path(os.environ["XDG_RUNTIME_DIR"]) / "home"
    home.mkdir(exist_ok=True)
    environment = minimal_env(BEAM_NO_DELEGATE="1", HOME=str(home), **env)
    return subprocess.run(
        [str(LEAN_BEAM), *argv],
        env=environment,
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def host_list() -> list[dict[str, Any]]:
    done = lean_beam("host", "list", "--json")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["schema"] == 1
    hosts: list[dict[str, Any]] = body["hosts"]
    return hosts


__all__ = ["ok", "until", "workspace"]
