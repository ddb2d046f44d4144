"""Starting the fake Lean server the way a user would: ``--lean-cmd`` or a fake ``lake``."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from tests.broker.conftest import start
from tests.mcp.helpers import REPO, Server

FAKE_CMD = shlex.join([sys.executable, "-m", "tests.fake_lean"])

# Knobs of the fake and the server that keep tests fast.
FAST_FAKE = {
    "FAKE_LEAN_REPORT_DELAY_MS": "5",
    "FAKE_LEAN_CMD_DELAY_MS": "1",
    "PYTHONPATH": str(REPO),
}


def fake_server(servers: list[Server], *flags: str, **env: str) -> Server:
    return start(servers, "--lean-cmd", FAKE_CMD, *flags, **{**FAST_FAKE, **env})


def workspace(root: Path) -> dict:
    return {"workspace": {"root": str(root)}}
