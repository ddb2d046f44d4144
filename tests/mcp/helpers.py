"""A real `python -m beam_mcp` subprocess over real pipes, and message builders."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tests.support.hosts import passed_on

REPO = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
WAIT_S = 20.0


def meta(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"},
    }
    base.update(extra)
    return base


def request(rid: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def modern(
    rid: Any,
    method: str,
    params: dict[str, Any] | None = None,
    meta_extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    body = dict(params or {})
    body["_meta"] = {**meta(**(meta_extra or {})), **body.get("_meta", {})}
    return request(rid, method, body)


def call(
    rid: Any,
    tool: str,
    arguments: dict[str, Any] | None = None,
    *,
    modern_meta: bool = True,
    call_meta: dict[str, Any] | None = None,
    log_level: str | None = None,
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": arguments or {}}
    if call_meta:
        params["_meta"] = dict(call_meta)
    if modern_meta:
        extra = {} if log_level is None else {"io.modelcontextprotocol/logLevel": log_level}
        return modern(rid, "tools/call", params, extra)
    return request(rid, "tools/call", params)


# The fault-injection backend (tests/mcp/sleep_backend.py), loaded through the --backend hook.
SLEEP_BACKEND = {"LEAN_BEAM_MCP_BACKEND": f"{REPO}/tests/mcp/sleep_backend.py:create_backend"}


def minimal_env(**extra: str) -> dict[str, str]:
    """What MCP clients pass: HOME, PATH and a few more, plus the repository on PYTHONPATH."""
    env = {
        k: os.environ[k]
        for k in ("HOME", "PATH", "USER", "SHELL", "TERM", "LOGNAME")
        if k in os.environ
    }
    env["PYTHONPATH"] = str(REPO)
    env.update(passed_on())  # the test's own socket directory for shared Lean hosts
    env.update(extra)
    return env


class Server:
    """One server process; stdout lines are collected by a thread and parsed as JSON."""

    def __init__(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        prefix: Sequence[str] = (),
        command: Sequence[str] = (sys.executable, "-m", "beam_mcp"),
    ) -> None:
        """`prefix` runs the server under another command (``strace -f -o ...``); `command`
        is how the server starts (an installed ``<root>/bin/lean-beam-mcp``, say)."""
        self.proc = subprocess.Popen(
            [*prefix, *command, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env if env is not None else minimal_env(),
            cwd=cwd or str(REPO),
        )
        self.lines: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self.raw: list[bytes] = []
        self._stderr = b""
        self._out = threading.Thread(target=self._pump, daemon=True)
        self._out.start()
        self._err = threading.Thread(target=self._pump_err, daemon=True)
        self._err.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw.append(line)
            self.lines.put(line)
        self.lines.put(b"")

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        self._stderr = self.proc.stderr.read()

    def send(self, *messages: dict[str, Any] | bytes | str) -> None:
        assert self.proc.stdin is not None
        for m in messages:
            if isinstance(m, dict):
                data = json.dumps(m).encode() + b"\n"
            elif isinstance(m, str):
                data = m.encode()
            else:
                data = m
            self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read(self, timeout: float = WAIT_S) -> dict[str, Any]:
        line = self.lines.get(timeout=timeout)
        assert line, "server closed stdout"
        value: dict[str, Any] = json.loads(line)
        return value

    def read_until(
        self, rid: Any, timeout: float = WAIT_S
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The response to `rid` and every message that came before it."""
        before: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while True:
            msg = self.read(max(0.01, deadline - time.monotonic()))
            if (
                "id" in msg
                and msg["id"] == rid
                and "method" not in msg
                and type(msg["id"]) is type(rid)
            ):
                return msg, before
            before.append(msg)

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        self.send(message)
        return self.read_until(message["id"])[0]

    def quiet(self, seconds: float) -> list[dict[str, Any]]:
        """Everything written during `seconds` (expected to be nothing, usually)."""
        got: list[dict[str, Any]] = []
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if not line:
                break
            got.append(json.loads(line))
        return got

    def legacy_init(self) -> dict[str, Any]:
        init = self.ask(
            request(
                0,
                "initialize",
                {
                    "protocolVersion": LEGACY,
                    "capabilities": {},
                    "clientInfo": {"name": "tests", "version": "1"},
                },
            )
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return init

    def close(self, timeout: float = WAIT_S) -> tuple[int, bytes, list[dict[str, Any]]]:
        """EOF, then the exit code, stderr and every remaining stdout message."""
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        self._out.join(timeout)
        self._err.join(timeout)
        rest: list[dict[str, Any]] = []
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                break
            if line:
                rest.append(json.loads(line))
        return code, self._stderr, rest

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def error_code(msg: dict[str, Any]) -> int:
    code: int = msg["error"]["code"]
    return code


def structured(msg: dict[str, Any]) -> dict[str, Any]:
    value: dict[str, Any] = msg["result"]["structuredContent"]
    return value


def ids_of(messages: Iterable[dict[str, Any]]) -> list[Any]:
    return [m["id"] for m in messages if "id" in m and "method" not in m]
