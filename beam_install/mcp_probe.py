"""One MCP round trip through a registered command, exactly as a client would start it.

The command runs with the argv stored in the registration and an environment of only the
variables MCP clients pass (HOME, PATH, USER, SHELL, TERM, LOGNAME) plus the entry's own `env`.
It is sent `initialize`, `notifications/initialized` and `tools/list` over stdio; the answer
must name the server and list tools. Every wait is bounded; the process is killed afterwards.
"""

from __future__ import annotations

import json
import queue
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

PROTOCOL = "2025-11-25"


@dataclass
class ProbeResult:
    ok: bool
    detail: str


def _reader(stream: IO[str], out: queue.Queue[str | None]) -> None:
    for line in stream:
        out.put(line)
    out.put(None)


def _answer(lines: queue.Queue[str | None], want: int, deadline: float) -> dict[str, Any]:
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            raise TimeoutError from None
        if line is None:
            raise EOFError
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("id") == want:
            return message


def _send(stdin: IO[str], message: dict[str, Any]) -> None:
    stdin.write(json.dumps(message) + "\n")
    stdin.flush()


def _exchange(proc: subprocess.Popen[str], deadline: float) -> ProbeResult:
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    _send(
        proc.stdin,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "lean-beam-doctor", "version": "1"},
            },
        },
    )
    init = _answer(lines, 1, deadline)
    if "result" not in init:
        return ProbeResult(False, f"initialize failed: {json.dumps(init.get('error'))}")
    server = init["result"].get("serverInfo", {})
    _send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _send(proc.stdin, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    listed = _answer(lines, 2, deadline)
    tools = (listed.get("result") or {}).get("tools")
    if not isinstance(tools, list) or not tools:
        return ProbeResult(False, f"tools/list gave no tools: {json.dumps(listed)[:200]}")
    name = f"{server.get('name', '?')} {server.get('version', '')}".strip()
    return ProbeResult(True, f"{name} answered initialize and listed {len(tools)} tools")


def round_trip(argv: list[str], env: Mapping[str, str], cwd: str, timeout: float) -> ProbeResult:
    """Start `argv` and talk MCP to it; never waits longer than `timeout` seconds."""
    with tempfile.TemporaryFile("w+", errors="replace") as stderr:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                errors="replace",
            )
        except OSError as exc:
            return ProbeResult(False, f"cannot start {argv[0]}: {exc.strerror or exc}")
        try:
            return _exchange(proc, time.monotonic() + timeout)
        except TimeoutError:
            return ProbeResult(False, f"no MCP answer within {timeout:g} s")
        except (EOFError, BrokenPipeError):
            proc.wait(timeout=5)
            stderr.seek(0)
            tail = stderr.read().strip().splitlines()[-3:]
            return ProbeResult(
                False,
                f"exited {proc.returncode} before answering: "
                + (" | ".join(tail) or "(no stderr)"),
            )
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=5)
