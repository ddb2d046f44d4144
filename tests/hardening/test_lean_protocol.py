"""Lean protocol violations are reported as such (issue 13.7), not as a plain exit."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tests.broker.conftest import start
from tests.broker.fake import err, workspace
from tests.mcp.helpers import Server

GARBAGE = (
    "import sys, time; sys.stdout.write('hello, I am not LSP\\r\\n\\r\\n');"
    " sys.stdout.flush(); time.sleep(60)"
)
HUGE = (
    "import sys, time; sys.stdout.write('Content-Length: 99999999999\\r\\n\\r\\n{');"
    " sys.stdout.flush(); time.sleep(60)"
)
NOT_JSON = (
    "import sys, time; sys.stdout.write('Content-Length: 5\\r\\n\\r\\nhello');"
    " sys.stdout.flush(); time.sleep(60)"
)


@pytest.mark.parametrize(
    ("code", "says"),
    [(GARBAGE, "unexpected LSP header"), (HUGE, "exceeds"), (NOT_JSON, "not UTF-8 JSON")],
    ids=["garbage", "huge", "not-json"],
)
def test_a_server_writing_non_lsp_is_named_a_protocol_violation(
    servers: list[Server], project: Path, code: str, says: str
) -> None:
    server = start(servers, "--lean-cmd", shlex.join([sys.executable, "-c", code]))
    error = err(server, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    text = json.dumps(error)
    assert "broke the LSP protocol" in text and says in text, error
    assert "still running" not in text, error
