from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp.helpers import SLEEP_BACKEND, Server, minimal_env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "Main.lean").write_text("def x := 1\n")
    return root


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    yield srv
    srv.kill()


@pytest.fixture
def sleepy() -> Iterator[Server]:
    """A server with the test-only sleep backend and a 200 ms status delay."""
    srv = Server("--status-delay-ms", "200", env=minimal_env(**SLEEP_BACKEND))
    yield srv
    srv.kill()
