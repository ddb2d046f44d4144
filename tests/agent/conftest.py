from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp.helpers import Server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "lakefile.toml").write_text('name = "proj"\ndefaultTargets = ["Main"]\n')
    (root / "Main.lean").write_text("def answerA : Nat := 42\n")
    return root.resolve()


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.kill()
