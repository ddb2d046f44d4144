"""The socket: its modes, the peer's uid, the versioned handshake, and bad frames."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.host.helpers import agent, hosts_here, sync
from tests.mcp.helpers import Server

SYSTEM_PYTHON = "/usr/bin/python3"
# Stdlib only: `nobody` cannot read this checkout's virtual environment.
PROBE = r"""
import json, socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    sock.connect(sys.argv[1])
except OSError as error:
    print("connect:" + type(error).__name__)
    raise SystemExit(0)
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "host/hello", "params":
    {"protocol": 1, "runtime_id": "", "role": "probe", "pid": 0}}).encode()
sock.settimeout(10)
try:  # the host may close before, while or after this writes
    sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    data = sock.recv(65536)
except OSError:
    data = b""
print("answer:" + ("none" if not data else "some"))
"""


def _socket_path() -> Path:
    [found] = list((Path(os.environ["XDG_RUNTIME_DIR"]) / "lean-beam").glob("*.sock"))
    return found


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _exchange(path: Path, *messages: bytes) -> bytes:
    """Sends raw bytes to the host and returns everything it writes before closing (bounded)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(path))
        for message in messages:
            sock.sendall(message)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def _hello(**changes: Any) -> bytes:
    params = {"protocol": 1, "runtime_id": "", "role": "probe", "pid": os.getpid(), **changes}
    return _frame({"jsonrpc": "2.0", "id": 1, "method": "host/hello", "params": params})


def _as_nobody(path: Path) -> str:
    argv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    done = subprocess.run(
        [*argv, SYSTEM_PYTHON, "-c", PROBE, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _need_setpriv() -> None:
    missing = os.geteuid() != 0 or not shutil.which("setpriv") or not os.access(SYSTEM_PYTHON, 1)
    if missing:
        if os.environ.get("CI"):
            pytest.fail("CI runs as root with setpriv and /usr/bin/python3 to act as nobody")
        pytest.skip("needs root, setpriv and /usr/bin/python3 to act as nobody")


def test_the_socket_is_private_and_another_user_is_refused(
    agents: list[Server], project: Path
) -> None:
    _need_setpriv()
    sync(agent(agents), 1, project)
    path = _socket_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert _as_nobody(path) == "connect:PermissionError"  # the modes stop it first
    # With the modes opened up, the host itself still refuses: it asks the kernel who called.
    for directory in (path.parent.parent, path.parent):
        directory.chmod(0o711)
    path.chmod(0o666)
    assert _as_nobody(path) == "answer:none"
    assert "refused a connection from uid 65534" in path.with_suffix(".log").read_text()
    sync(agents[0], 2, project)  # the host serves its own user as before


def test_the_handshake_refuses_another_runtime_and_anything_before_hello(
    agents: list[Server], project: Path
) -> None:
    server = agent(agents)
    sync(server, 1, project)
    path = _socket_path()
    other = _exchange(path, _hello(role="agent", runtime_id="dev-elsewhere"))
    assert b'"code":-32001' in other and b"client runtime dev-elsewhere" in other
    early = _frame({"jsonrpc": "2.0", "id": 7, "method": "host/call", "params": {}})
    assert b"the first request must be host/hello" in _exchange(path, early)
    garbage = _exchange(path, b"Content-Length: 5\r\n\r\n{nope")
    assert garbage == b""  # a connection that breaks the framing is closed
    wrong = _exchange(path, _hello(protocol=99))
    assert b"client protocol 99" in wrong
    assert [h.pid for h in hosts_here()] and sync(server, 2, project)["version"] == 1
