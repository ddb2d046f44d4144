from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp.helpers import Server, minimal_env
from tests.support.projects import lean_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return lean_project(tmp_path / "proj", {"Main.lean": "def answerA : Nat := 42\n"})


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
