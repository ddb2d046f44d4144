"""A fresh HOME with a real install per test (the `beam` fixture of tests/setup), and the real
client CLIs, looked up first so that a missing one skips before anything is installed."""

from __future__ import annotations

import pytest

from tests.setup.conftest import Beam, beam
from tests.support.clients import real_cli

__all__ = ["Beam", "beam", "clis"]


@pytest.fixture
def clis() -> dict[str, str]:
    """The four CLIs by command name (skips locally, fails under CI, when one is missing)."""
    return {name: real_cli(name) for name in ("claude", "codex", "gemini", "opencode")}
