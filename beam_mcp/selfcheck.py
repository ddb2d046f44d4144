"""`lean-beam-mcp --self-check [FILE]`: an end-to-end MCP round trip against a child server.

The child is this runtime's own launcher when running from an installed runtime, otherwise
`python -m beam_mcp`; it gets the same flags. The check speaks the modern family and runs these
phases, each bounded by its own timeout: server/discover, tools/list, beam_version, lean_sync
(only with FILE) and EOF teardown (exit 0, nothing on stderr).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from typing import Any

from beam_mcp.families import (
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_VERSION,
    MODERN_VERSION,
)
from beam_mcp.settings import SELF_CHECK_TIMEOUT_ENV, Settings, SettingsError, parse_int
from beam_mcp.tools.catalog import NAMES

DEFAULT_TIMEOUT_MS = 30_000
DEFAULT_SYNC_TIMEOUT_MS = 600_000


class PhaseFailed(Exception):
    def __init__(self, phase: str, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.phase = phase
        self.problem = problem
        self.fix = fix


def child_command(settings: Settings) -> list[str]:
    from beam_runtime.identity import locate_runtime

    location = locate_runtime()
    if location is not None:
        # The launcher adds --beam-cli of its own runtime; ours, if given, comes after and wins.
        return [
            os.path.join(str(location.runtime_dir), "bin", "lean-beam-mcp"),
            *settings.child_args(),
        ]
    return [sys.executable, "-m", "beam_mcp", *settings.child_args()]


def timeouts() -> tuple[float, float]:
    raw = os.environ.get(SELF_CHECK_TIMEOUT_ENV)
    if not raw:
        return DEFAULT_TIMEOUT_MS / 1000, DEFAULT_SYNC_TIMEOUT_MS / 1000
    value = parse_int(raw, SELF_CHECK_TIMEOUT_ENV, 1) / 1000
    return value, value


class Child:
    def __init__(self, argv: list[str], cwd: str) -> None:
        self.proc = subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self.stderr = bytearray()
        threading.Thread(target=self._pump_out, daemon=True).start()
        self._err_thread = threading.Thread(target=self._pump_err, daemon=True)
        self._err_thread.start()

    def _pump_out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        self.stderr += self.proc.stderr.read()

    def request(
        self, phase: str, rid: int, method: str, params: dict[str, Any], timeout: float
    ) -> dict[str, Any]:
        meta = {
            META_VERSION: MODERN_VERSION,
            META_CAPABILITIES: {},
            META_CLIENT_INFO: {"name": "lean-beam-mcp-self-check", "version": "1"},
        }
        message = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": method,
            "params": {**params, "_meta": meta},
        }
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:
            raise self._died(phase) from None
        return self._response(phase, rid, timeout)

    def _response(self, phase: str, rid: int, timeout: float) -> dict[str, Any]:
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise PhaseFailed(
                    phase,
                    f"no answer within {timeout * 1000:.0f} ms",
                    f"raise {SELF_CHECK_TIMEOUT_ENV} or look for a hung server",
                ) from None
            if not line:
                raise self._died(phase)
            try:
                message = json.loads(line)
            except ValueError:
                raise PhaseFailed(
                    phase,
                    f"the server wrote a non-JSON line: {line[:200]!r}",
                    "report this as a lean-beam bug",
                ) from None
            if "method" in message and "id" not in message:
                continue  # progress or log notifications
            if message.get("id") != rid:
                raise PhaseFailed(
                    phase, f"unexpected message {line[:200]!r}", "report this as a lean-beam bug"
                )
            if "error" in message:
                raise PhaseFailed(
                    phase, f"JSON-RPC error {message['error']}", "report this as a lean-beam bug"
                )
            result: dict[str, Any] = message["result"]
            if result.get("resultType") != "complete":
                raise PhaseFailed(
                    phase, "the result lacks resultType complete", "report this as a lean-beam bug"
                )
            return result

    def _died(self, phase: str) -> PhaseFailed:
        self.proc.wait(timeout=5)
        self._err_thread.join(timeout=5)
        tail = bytes(self.stderr[-2000:]).decode("utf-8", "replace").strip()
        return PhaseFailed(
            phase,
            f"the server exited with code {self.proc.returncode}" + (f": {tail}" if tail else ""),
            "run lean-beam doctor, and reinstall with lean-beam install",
        )

    def teardown(self, timeout: float) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise PhaseFailed(
                "EOF teardown",
                f"the server did not exit within {timeout * 1000:.0f} ms of EOF",
                "report this as a lean-beam bug",
            ) from None
        self._err_thread.join(timeout=timeout)
        if code != 0:
            raise PhaseFailed(
                "EOF teardown",
                f"the server exited with code {code}",
                "report this as a lean-beam bug",
            )
        if self.stderr:
            text = bytes(self.stderr[-2000:]).decode("utf-8", "replace").strip()
            raise PhaseFailed(
                "EOF teardown",
                f"the server wrote to stderr: {text}",
                "fix what the message says; a healthy server writes nothing",
            )

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def check(settings: Settings, file: str | None, out: list[str]) -> None:
    phase_s, sync_s = timeouts()
    root = os.path.realpath(os.getcwd())
    try:
        child = Child(child_command(settings), root)
    except OSError as exc:
        raise PhaseFailed(
            "start", f"cannot start the server: {exc}", "reinstall with lean-beam install"
        ) from None
    try:
        steps(child, root, file, phase_s, sync_s, out)
        child.teardown(phase_s)
        out.append("EOF teardown: ok (exit 0, empty stderr)")
    finally:
        child.kill()


def steps(
    child: Child, root: str, file: str | None, phase_s: float, sync_s: float, out: list[str]
) -> None:
    found = child.request("server/discover", 1, "server/discover", {}, phase_s)
    if MODERN_VERSION not in found.get("supportedVersions", []):
        raise PhaseFailed(
            "server/discover",
            f"{MODERN_VERSION} is not supported",
            "reinstall with lean-beam install",
        )
    out.append(f"server/discover: ok (protocol {MODERN_VERSION})")
    listed = child.request("tools/list", 2, "tools/list", {}, phase_s)
    names = [t.get("name") for t in listed.get("tools", [])]
    missing = [n for n in NAMES if n not in names]
    if missing:
        raise PhaseFailed(
            "tools/list", f"missing tools: {', '.join(missing)}", "reinstall with lean-beam install"
        )
    out.append(f"tools/list: ok ({len(names)} tools)")
    out.append("beam_version: " + version_phase(child, phase_s))
    if file is not None:
        out.append("lean_sync: " + sync_phase(child, root, file, sync_s))


def version_phase(child: Child, timeout: float) -> str:
    result = child.request(
        "beam_version", 3, "tools/call", {"name": "beam_version", "arguments": {}}, timeout
    )
    ident = result.get("structuredContent") or {}
    if result.get("isError"):
        raise PhaseFailed("beam_version", f"tool error {ident}", "report this as a bug")
    if "runtime_id" not in ident:
        return f"ok (development identity {ident.get('version')}, not an installed runtime)"
    if ident.get("runtime_error"):
        raise PhaseFailed(
            "beam_version",
            f"installed runtime is broken: {ident['runtime_error']}",
            "stop Beam clients, then follow the "
            "recovery the error names and rerun lean-beam install",
        )
    if ident.get("runtime_current") is not True:
        raise PhaseFailed(
            "beam_version",
            "this runtime is not the current one",
            "restart the agent or MCP client so it uses the current runtime",
        )
    return f"ok (installed runtime {ident['runtime_id']}, current)"


def sync_phase(child: Child, root: str, file: str, timeout: float) -> str:
    arguments = {"workspace": {"root": root}, "path": file, "wait_ms": int(timeout * 1000)}
    result = child.request(
        "lean_sync", 4, "tools/call", {"name": "lean_sync", "arguments": arguments}, timeout
    )
    content = result.get("structuredContent") or {}
    if result.get("isError"):
        data = content.get("data") or {}
        raise PhaseFailed(
            "lean_sync",
            f"{content.get('code')}: {content.get('message')}",
            data.get("fix") or "run lean-beam doctor in this project",
        )
    if "document_progress" not in content:
        raise PhaseFailed(
            "lean_sync", "the result has no document_progress", "report this as a lean-beam bug"
        )
    diagnostics = content.get("diagnostics") or {}
    if diagnostics.get("complete") is False:
        raise PhaseFailed(
            "lean_sync",
            f"Lean did not finish {file} within {timeout * 1000:.0f} ms",
            f"raise {SELF_CHECK_TIMEOUT_ENV}",
        )
    return (
        f"{synced_text((diagnostics.get('counts') or {}).get('error', 0))} "
        f"(version {content.get('version')})"
    )


def synced_text(errors: int) -> str:
    """``synced: 1 error``, ``synced: 2 errors``: what the file's diagnostics say, in words."""
    return f"synced: {errors} error{'' if errors == 1 else 's'}"


def run_self_check(settings: Settings, file: str | None) -> int:
    out: list[str] = []
    if file is not None:
        target = os.path.join(os.getcwd(), file)
        if not os.path.isfile(target):
            sys.stderr.write(
                f"lean-beam-mcp self-check failed before starting: no file "
                f"{file}\nfix: run it from the project root with a file that "
                "exists\n"
            )
            return 1
    try:
        check(settings, file, out)
    except SettingsError as exc:
        sys.stderr.write(f"lean-beam-mcp self-check: {exc}\n")
        return 2
    except PhaseFailed as failed:
        sys.stdout.write("".join(f"  passed {line}\n" for line in out))
        sys.stderr.write(
            f"lean-beam-mcp self-check failed in phase {failed.phase}: "
            f"{failed.problem}\nfix: {failed.fix}\n"
        )
        return 1
    sys.stdout.write("lean-beam-mcp self-check passed\n" + "".join(f"  {x}\n" for x in out))
    return 0
