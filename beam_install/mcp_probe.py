"""One MCP round trip through a registered command, exactly as its client would start it.

The command runs with the argv stored in the registration, in the directory the client would
start it in, and an environment of only the variables MCP clients pass (HOME, PATH, USER, SHELL,
TERM, LOGNAME) plus the entry's own `env`. It is spoken to as the client speaks
(`beam_install.clients.profiles`): a client that tries the modern family sends `server/discover`
first and keeps it when the server offers that revision; otherwise `initialize` with the
client's revision, capabilities and identity, `notifications/initialized` and `tools/list`. An
`initialize` answer naming a revision the client does not accept fails, as the client would drop
the connection. Every wait is bounded; the process is killed afterwards.
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

from beam_install.clients.profiles import GENERIC, ClientProfile


@dataclass
class ProbeResult:
    ok: bool
    detail: str
    rejected: bool = False  # the server answered, with a revision the client drops


def _reader(stream: IO[str], out: queue.Queue[str | None]) -> None:
    for line in stream:
        out.put(line)
    out.put(None)


def _answer(lines: queue.Queue[str | None], want: int | str, deadline: float) -> dict[str, Any]:
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


def _request(rid: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _listed(
    proc: subprocess.Popen[str], lines: queue.Queue[str | None], deadline: float, params: Any
) -> list[Any] | str:
    """The tools of a `tools/list` answer, or what went wrong."""
    assert proc.stdin is not None
    _send(proc.stdin, _request(2, "tools/list", params))
    listed = _answer(lines, 2, deadline)
    tools = (listed.get("result") or {}).get("tools")
    if not isinstance(tools, list) or not tools:
        return f"tools/list gave no tools: {json.dumps(listed)[:200]}"
    return tools


def _name(result: dict[str, Any], key: str = "serverInfo") -> str:
    server = result.get(key)
    server = server if isinstance(server, dict) else {}
    return f"{server.get('name', '?')} {server.get('version', '')}".strip()


def _discover(
    proc: subprocess.Popen[str],
    lines: queue.Queue[str | None],
    deadline: float,
    profile: ClientProfile,
) -> ProbeResult | None:
    """The modern family, when the server offers the client's revision; else None."""
    assert proc.stdin is not None
    meta = {"_meta": profile.modern_meta()}
    _send(proc.stdin, _request("discover", "server/discover", meta))
    found = _answer(lines, "discover", deadline).get("result")
    if not isinstance(found, dict) or profile.modern not in (found.get("supportedVersions") or []):
        return None  # the client goes on with `initialize`
    tools = _listed(proc, lines, deadline, meta)
    if isinstance(tools, str):
        return ProbeResult(False, tools)
    name = _name(found)
    return ProbeResult(
        True, f"{name} answered server/discover ({profile.modern}) and listed {len(tools)} tools"
    )


def _exchange(proc: subprocess.Popen[str], deadline: float, profile: ClientProfile) -> ProbeResult:
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    if profile.modern:
        modern = _discover(proc, lines, deadline, profile)
        if modern is not None:
            return modern
    _send(proc.stdin, _request(1, "initialize", profile.initialize()))
    init = _answer(lines, 1, deadline)
    if not isinstance(init.get("result"), dict):
        return ProbeResult(False, f"initialize failed: {json.dumps(init.get('error'))}")
    revision = init["result"].get("protocolVersion")
    if not profile.accepts_answer(revision):
        return ProbeResult(False, _rejection(profile, revision), rejected=True)
    _send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = _listed(proc, lines, deadline, {})
    if isinstance(tools, str):
        return ProbeResult(False, tools)
    name = _name(init["result"])
    return ProbeResult(
        True, f"{name} answered initialize ({revision}) and listed {len(tools)} tools"
    )


def _rejection(profile: ClientProfile, revision: Any) -> str:
    who = f"{profile.title} {profile.seen}".strip()
    return (
        f"proposed {profile.protocol} as {who} does and got protocol version "
        f"{json.dumps(revision)}, which {who} does not accept (it knows {profile.known()}): "
        "it drops the connection"
    )


def round_trip(
    argv: list[str],
    env: Mapping[str, str],
    cwd: str,
    timeout: float,
    profile: ClientProfile | None = None,
) -> ProbeResult:
    """Start `argv` and talk MCP to it as `profile`'s client (default: a generic one that
    proposes 2025-06-18); never waits longer than `timeout` seconds."""
    profile = profile or GENERIC
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
            return _exchange(proc, time.monotonic() + timeout, profile)
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
