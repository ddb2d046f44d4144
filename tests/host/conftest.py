"""Fixtures of the shared-host tests: agents (real `python -m beam_mcp` processes) on one
project, in the test's own socket directory (`host_sandbox`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp.helpers import Server
from tests.support.projects import lean_project

MAIN = "import Mathlib\ndef answerA : Nat := 42\ntheorem foo : 1 + 1 = 2 := by\n  sorry\n"
GOAL = {"path": "Main.lean", "line": 3, "character": 2}  # at the `sorry`


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return lean_project(tmp_path / "proj", {"Main.lean": MAIN})


@pytest.fixture
def agents() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for agent in started:
        agent.kill()
