"""Lean protocol violations are reported as such, not as a plain exit."""

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
    data = error["data"]
    assert data["reason"] == "protocolViolation" and says in data["violation"], data
    assert "lake serve" in data["fix"], data


# Answers `initialize` like a server, then breaks the protocol on the next message it reads.
LATE = r"""
import json, sys, time
def read():
    length = 0
    while (line := sys.stdin.buffer.readline().strip()):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(sys.stdin.buffer.read(length))
def send(body):
    data = json.dumps(body).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n%s" % (len(data), data))
    sys.stdout.buffer.flush()
first = read()
send({"jsonrpc": "2.0", "id": first["id"], "result": {"capabilities": {}}})
read()  # initialized
read()  # the first message of the tool call
sys.stdout.buffer.write(b"this is no LSP header\r\n\r\n")
sys.stdout.buffer.flush()
time.sleep(60)
"""


def test_a_violation_after_start_is_named_too(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    script = tmp_path / "late.py"
    script.write_text(LATE)
    server = start(servers, "--lean-cmd", shlex.join([sys.executable, str(script)]))
    error = err(
        server,
        1,
        "lean_hover",
        {**workspace(project), "path": "Main.lean", "line": 0, "character": 0},
    )
    data = error["data"]
    assert data.get("reason") == "protocolViolation", error
    assert "unexpected LSP header" in data["violation"], error
    assert "still running" not in json.dumps(error), error
