from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp.helpers import Server, minimal_env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "lakefile.toml").write_text('name = "proj"\ndefaultTargets = ["Main"]\n')
    (root / "Main.lean").write_text("def answerA : Nat := 42\n")
    return root.resolve()


def script(tmp_path: Path, name: str, body: str) -> str:
    """A small executable sh script standing in for a broken toolchain."""
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def python_cmd(code: str) -> str:
    return shlex.join([sys.executable, "-c", code])


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.kill()


def start(servers: list[Server], *args: str, **env: str) -> Server:
    server = Server(*args, env=minimal_env(**env))
    servers.append(server)
    return server
