"""A fresh HOME and install root with a real `lean-beam install` done, per test."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.runtime.clienv import Run, client_env, dev_command, run


@dataclass
class Installed:
    home: Path
    root: Path
    runtime_id: str  # the runtime the install created (current)
    extra_env: dict[str, str] = field(default_factory=dict)

    def env(self, **extra: str) -> dict[str, str]:
        return client_env(self.home, **{**self.extra_env, **extra})

    def beam(self, *args: str, cwd: Path | None = None, **extra: str) -> Run:
        """`<root>/bin/lean-beam ARGS` as an MCP client would run it."""
        return run(
            [str(self.root / "bin" / "lean-beam"), *args], self.env(**extra), cwd=cwd or self.home
        )

    def versions(self) -> Path:
        return self.root / "versions"


def install_into(home: Path, root: Path) -> str:
    done = run(
        [
            dev_command("lean-beam"),
            "install",
            "--install-root",
            str(root),
            "--bin-dir",
            str(home / ".local" / "bin"),
            "--json",
        ],
        client_env(home),
    )
    assert done.code == 0, done.stderr
    return str(done.json()["runtime"]["id"])


@pytest.fixture
def installed(tmp_path: Path) -> Installed:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "beam"
    return Installed(home, root, install_into(home, root))


class LeaseHolder:
    """A real process holding a runtime's shared lease until it is stopped."""

    def __init__(self, root: Path, runtime_id: str) -> None:
        code = (
            "import sys\nfrom pathlib import Path\nfrom beam_runtime.leases import hold_lease\n"
            "try:\n    fd = hold_lease(Path(sys.argv[1]), sys.argv[2])\n"
            "except Exception as exc:\n    print('refused', exc, flush=True); sys.exit(1)\n"
            "print('held', flush=True)\nsys.stdin.read()\n"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, str(root), runtime_id],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.held = self.proc.stdout.readline().startswith("held")

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture
def lease_holders():  # type: ignore[no-untyped-def]
    holders: list[LeaseHolder] = []

    def start(root: Path, runtime_id: str) -> LeaseHolder:
        holder = LeaseHolder(root, runtime_id)
        holders.append(holder)
        return holder

    yield start
    for holder in holders:
        holder.stop()


def write_codex(home: Path, servers: dict[str, str]) -> Path:
    """`~/.codex/config.toml` registering `name -> command` for each server."""
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f'[mcp_servers."{n}"]\ncommand = {json.dumps(c)}\n' for n, c in servers.items())
    path.write_text(body)
    return path
