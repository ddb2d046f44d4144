"""The narrow view of an LSP connection the broker needs, and the failures it reports.

``beam_runtime.lsp`` owns framing, the subprocess and process-tree teardown; ``open_channel``
adapts its client to this interface so the session code does not depend on its details.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import anyio
import psutil
from anyio.abc import Process, TaskGroup

NotificationHandler = Callable[[str, Any], None]


class ResponseError(Exception):
    """Lean answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class ChannelTimeout(Exception):
    """A request got no answer in time; it was cancelled on the Lean side."""

    def __init__(self, waited_ms: int) -> None:
        super().__init__(f"no answer after {waited_ms} ms")
        self.waited_ms = waited_ms


class ChannelClosed(Exception):
    """The server process exited (or could not be started) while a request was pending."""

    def __init__(self, message: str, stderr_tail: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.stderr_tail = stderr_tail or []


class Channel(Protocol):
    @property
    def pid(self) -> int | None: ...

    @property
    def alive(self) -> bool: ...

    def stderr_tail(self) -> list[str]: ...

    async def request(self, method: str, params: Any, timeout_s: float | None) -> Any: ...

    async def notify(self, method: str, params: Any) -> None: ...

    async def aclose(self) -> None: ...


# -- a stand-in client, used until ``beam_runtime.lsp`` lands ------------------------------------

_TAIL = 64


class _Waiter:
    def __init__(self) -> None:
        self.event = anyio.Event()
        self.result: Any = None
        self.error: Exception | None = None


class ProcessChannel:
    """Content-Length framed JSON-RPC over a subprocess's stdio, served by two reader tasks."""

    def __init__(self, process: Process, on_notification: NotificationHandler) -> None:
        self._process = process
        self._on_notification = on_notification
        self._pending: dict[int, _Waiter] = {}
        self._next_id = 1
        self._tail: deque[str] = deque(maxlen=_TAIL)
        self._write_lock = anyio.Lock()
        self._alive = True

    @property
    def pid(self) -> int | None:
        return self._process.pid

    @property
    def alive(self) -> bool:
        return self._alive

    def stderr_tail(self) -> list[str]:
        return list(self._tail)

    async def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        header = f"Content-Length: {len(body)}\r\n\r\n".encode("ascii")
        stdin = self._process.stdin
        if stdin is None or not self._alive:
            raise ChannelClosed("the Lean server is not running", self.stderr_tail())
        try:
            async with self._write_lock:
                await stdin.send(header + body)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise ChannelClosed(
                f"cannot write to the Lean server: {exc}", self.stderr_tail()
            ) from None

    async def notify(self, method: str, params: Any) -> None:
        await self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any, timeout_s: float | None) -> Any:
        rid = self._next_id
        self._next_id += 1
        waiter = _Waiter()
        self._pending[rid] = waiter
        started = time.monotonic()
        try:
            await self._write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
            with anyio.move_on_after(timeout_s) as scope:
                await waiter.event.wait()
            if scope.cancelled_caught:
                await self._cancel(rid)
                raise ChannelTimeout(int((time.monotonic() - started) * 1000))
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._cancel(rid)
            raise
        finally:
            self._pending.pop(rid, None)
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    async def _cancel(self, rid: int) -> None:
        if self._alive:
            with contextlib.suppress(ChannelClosed):
                await self.notify("$/cancelRequest", {"id": rid})

    async def read_stdout(self) -> None:
        stream = self._process.stdout
        assert stream is not None
        buffer = b""
        try:
            async for chunk in stream:
                buffer += chunk
                while True:
                    message, buffer = _take_message(buffer)
                    if message is None:
                        break
                    await self._dispatch(message)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        finally:
            self._closed("the Lean server closed its output")

    async def read_stderr(self) -> None:
        stream = self._process.stderr
        assert stream is not None
        buffer = b""
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            async for chunk in stream:
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                self._tail.extend(line.decode("utf-8", "replace") for line in lines)

    async def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message:
            if "id" in message:  # a server request: answer, never wait on it
                known = message["method"] in _NULL_ANSWERED
                reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
                if known:
                    reply["result"] = None
                else:
                    reply["error"] = {"code": -32601, "message": "not supported"}
                with contextlib.suppress(ChannelClosed):
                    await self._write(reply)
            else:
                self._on_notification(message["method"], message.get("params"))
            return
        waiter = self._pending.get(message.get("id"))  # type: ignore[arg-type]
        if waiter is None:
            return  # a late answer to an abandoned request
        error = message.get("error")
        if isinstance(error, dict):
            waiter.error = ResponseError(
                int(error.get("code", 0)), str(error.get("message", "")), error.get("data")
            )
        else:
            waiter.result = message.get("result")
        waiter.event.set()

    def _closed(self, reason: str) -> None:
        self._alive = False
        for waiter in self._pending.values():
            waiter.error = ChannelClosed(reason, self.stderr_tail())
            waiter.event.set()

    async def aclose(self) -> None:
        """``shutdown`` then ``exit`` (each briefly bounded), then kill the whole tree."""
        family = _family(self._process.pid)
        if self._alive:
            with anyio.move_on_after(1.0):
                with contextlib.suppress(Exception):
                    await self.request("shutdown", None, 1.0)
                with contextlib.suppress(Exception):
                    await self._write({"jsonrpc": "2.0", "method": "exit"})
            with anyio.move_on_after(0.5):
                await self._process.wait()
        family += _family(self._process.pid)
        _kill(family)
        with anyio.move_on_after(2.0):
            await self._process.wait()
        self._closed("the Lean session was stopped")
        with contextlib.suppress(Exception):
            await self._process.aclose()


_NULL_ANSWERED = {
    "client/registerCapability",
    "client/unregisterCapability",
    "workspace/semanticTokens/refresh",
    "workspace/inlayHint/refresh",
    "workspace/codeLens/refresh",
    "workspace/diagnostic/refresh",
}


def _take_message(buffer: bytes) -> tuple[dict[str, Any] | None, bytes]:
    head, sep, rest = buffer.partition(b"\r\n\r\n")
    if not sep:
        return None, buffer
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if len(rest) < length:
        return None, buffer
    body, remainder = rest[:length], rest[length:]
    message = json.loads(body.decode("utf-8"))
    return (message if isinstance(message, dict) else {}), remainder


def _family(pid: int | None) -> list[psutil.Process]:
    if pid is None:
        return []
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _kill(family: list[psutil.Process]) -> None:
    for process in family:
        with contextlib.suppress(psutil.Error):
            process.kill()


# Linux: the server gets SIGKILL when this process dies, even without a chance to clean up.
# anyio has no preexec hook, so a tiny exec shim sets PR_SET_PDEATHSIG (1) and execs the server.
_PDEATHSIG_SHIM = (
    "import ctypes, os, signal, sys\n"
    "try:\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)\n"
    "except Exception:\n"
    "    pass\n"
    "os.execvp(sys.argv[1], sys.argv[1:])\n"
)


def _guarded(argv: list[str]) -> list[str]:
    if sys.platform.startswith("linux"):
        return [sys.executable, "-c", _PDEATHSIG_SHIM, *argv]
    return argv


def _check_executable(program: str, env: dict[str, str]) -> None:
    """Fail in this process (not in the exec shim) when the server cannot be executed."""
    if os.sep in program:
        if not os.path.exists(program):
            raise FileNotFoundError(program)
        if not os.access(program, os.X_OK):
            raise PermissionError(program)
    elif shutil.which(program, path=env.get("PATH", "")) is None:
        raise FileNotFoundError(program)


async def open_channel(
    group: TaskGroup,
    *,
    argv: list[str],
    cwd: str,
    env: dict[str, str],
    on_notification: NotificationHandler,
) -> ProcessChannel:
    _check_executable(argv[0], env)
    process = await anyio.open_process(
        _guarded(argv),
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    channel = ProcessChannel(process, on_notification)
    group.start_soon(channel.read_stdout)
    group.start_soon(channel.read_stderr)
    return channel
