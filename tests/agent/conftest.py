from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp.helpers import Server
from tests.support.projects import lean_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return lean_project(tmp_path / "proj", {"Main.lean": "def answerA : Nat := 42\n"})


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.kill()
