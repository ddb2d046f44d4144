"""Fixtures shared with the broker tests: a fake Lean project and the servers a test starts."""

from tests.broker.conftest import project, servers

__all__ = ["project", "servers"]
