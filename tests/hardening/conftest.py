"""Fixtures shared with the broker and runtime tests: a fake Lean project, the servers a test
starts, and an install root with one runtime."""

from tests.broker.conftest import project, servers
from tests.runtime.conftest import installed

__all__ = ["installed", "project", "servers"]
