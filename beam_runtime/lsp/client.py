"""An anyio JSON-RPC client for one Lean language server process.

Use ``LspClient.launch(...)`` as an async context manager: it starts the process (own session,
stderr drained into a tail), runs the reader, and on exit shuts the server down and kills its
whole descendant tree. A client that must outlive the task opening it (one per workspace in the
broker) comes from ``LspClient.open_in(group, ...)`` and ends with ``close()``. Call
``initialize`` first; nothing else may be sent until it returned (``initialized`` is sent right
after the response, with nothing in between).
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus

from beam_runtime.lsp import process
from beam_runtime.lsp.errors import (
    ClientStateError,
    FramingError,
    LspError,
    ProtocolViolation,
    RequestTimeout,
    ServerExited,
    response_error,
)
from beam_runtime.lsp.framing import FrameBuffer, FrameReader, encode_message
from beam_runtime.lsp.scanner import SCANNER

NotificationHandler = Callable[[str, Any], None]
STDERR_EOF_WAIT_S = 0.5
ACKNOWLEDGED_SERVER_REQUESTS = frozenset(
    {
        "client/registerCapability",
        "client/unregisterCapability",
        "workspace/semanticTokens/refresh",
        "workspace/inlayHint/refresh",
        "workspace/codeLens/refresh",
        "workspace/diagnostic/refresh",
    }
)


class _Waiter:
    """The caller's side of one request: the answer once it came, and the wait for it.

    On asyncio the wait is a bare loop future, bounded by a loop timer: an anyio Event takes
    several calls to build, set and wait on, and ``anyio.fail_after`` a cancel scope, for every
    request. Other anyio backends get exactly those.
    """

    def __init__(self, method: str, loop: asyncio.AbstractEventLoop | None) -> None:
        self.method = method
        self.result: Any = None
        self.error: LspError | None = None
        self._future: asyncio.Future[None] | None = None
        self._event: anyio.Event | None = None
        if loop is not None:
            self._future = loop.create_future()
        else:
            self._event = anyio.Event()

    def is_set(self) -> bool:
        if self._future is not None:
            return self._future.done()
        assert self._event is not None
        return self._event.is_set()

    def set(self) -> None:
        if self._future is None:
            assert self._event is not None
            self._event.set()
        elif not self._future.done():  # done already: answered, expired or abandoned
            self._future.set_result(None)

    async def wait(self, limit: float) -> None:
        """Returns once set; raises ``TimeoutError`` after ``limit`` seconds."""
        future = self._future
        if future is None:
            assert self._event is not None
            with anyio.fail_after(limit):
                await self._event.wait()
            return
        expired = False

        def expire() -> None:
            nonlocal expired
            if not future.done():  # an answer that came first wins
                expired = True
                future.set_result(None)

        timer = future.get_loop().call_later(limit, expire)
        try:
            await future
        finally:
            timer.cancel()
        if expired:
            raise TimeoutError


class PendingRequest:
    """A request on the wire: await ``result()``, or ``cancel()`` it (``$/cancelRequest``)."""

    def __init__(self, client: LspClient, request_id: int, waiter: _Waiter) -> None:
        self.id = request_id
        self.method = waiter.method
        self._client = client
        self._waiter = waiter
        self._cancel_sent = False

    async def result(self, timeout: float | None = None) -> Any:
        """The answer; raises ``ResponseError`` subclasses, ``RequestTimeout``, ``ServerExited``.

        On timeout or when the caller is cancelled, ``$/cancelRequest`` goes out in the
        background and a late answer is dropped.
        """
        limit = self._client.request_timeout if timeout is None else timeout
        try:
            await self._waiter.wait(limit)
        except TimeoutError:
            self.abandon()
            raise RequestTimeout(self.method, limit) from None
        except anyio.get_cancelled_exc_class():
            self.abandon()
            raise
        if self._waiter.error is not None:
            raise self._waiter.error
        return self._waiter.result

    @property
    def answered(self) -> bool:
        """Whether the answer (or the failure of the whole connection) has arrived."""
        return self._waiter.is_set()

    async def cancel(self) -> None:
        """Ask the server to cancel; ``result()`` then usually raises ``RequestCancelled``."""
        if not self._cancel_sent and not self._waiter.is_set():
            self._cancel_sent = True
            await self._client.notify("$/cancelRequest", {"id": self.id})

    def abandon(self) -> None:
        self._client._forget(self.id, send_cancel=not self._cancel_sent)


class LspClient:
    def __init__(
        self,
        proc: process.ServerProcess,
        task_group: TaskGroup,
        request_timeout: float,
        stderr_lines: int,
    ) -> None:
        assert proc.popen.stdin and proc.popen.stdout and proc.popen.stderr
        self._proc = proc
        self._tg = task_group
        self.request_timeout = request_timeout
        self._stdin = process.PipeSendStream(proc.popen.stdin)
        self._stdout = process.PipeReceiveStream(proc.popen.stdout)
        self._stderr = process.PipeReceiveStream(proc.popen.stderr)
        self.stderr = process.StderrTail(stderr_lines)
        self._send_lock = anyio.Lock()
        self.bytes_sent = 0  # every frame written to the server's stdin (``beam_stats``)
        self._ids = itertools.count(1)
        self._pending: dict[int, _Waiter] = {}
        self._handlers: dict[str | None, list[NotificationHandler]] = {}
        self._phase = "new"
        self._exit_error: ServerExited | None = None
        self._violation: str | None = None  # what the server wrote that is not LSP
        self._exited = anyio.Event()
        self._closed = anyio.Event()
        self._stderr_done = anyio.Event()
        self.server_requests: list[tuple[str, Any]] = []
        self._stop_reading: Callable[[], None] | None = None
        self._loop = _asyncio_loop()  # None on anyio backends other than asyncio

    # lifecycle

    @classmethod
    @asynccontextmanager
    async def launch(
        cls,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        request_timeout: float = 60.0,
        stderr_lines: int = 64,
        track_interval: float = 0.5,
        on_notification: NotificationHandler | None = None,
    ) -> AsyncIterator[LspClient]:
        """Start ``argv`` in ``cwd`` (the project root) and yield a client for it."""
        proc = process.spawn(argv, cwd, env)
        async with anyio.create_task_group() as tg:
            client = cls(proc, tg, request_timeout, stderr_lines)
            if on_notification is not None:
                client.add_notification_handler(None, on_notification)
            tg.start_soon(client._read_loop)
            tg.start_soon(client._drain_stderr)
            SCANNER.register(proc, track_interval)  # ``kill_tree`` unregisters it
            try:
                yield client
            finally:
                with anyio.CancelScope(shield=True):
                    await client.close()
                tg.cancel_scope.cancel()

    @classmethod
    async def open_in(
        cls,
        group: TaskGroup,
        argv: Sequence[str],
        *,
        cwd: str | Path,
        env: Mapping[str, str] | None = None,
        on_notification: NotificationHandler | None = None,
        request_timeout: float = 60.0,
        stderr_lines: int = 64,
    ) -> LspClient:
        """Start ``argv`` in a task of the caller's long-lived ``group``; ``close()`` ends it.

        ``on_notification`` sees every notification from the first one. Spawn failures
        (``FileNotFoundError``, ``PermissionError``) are raised here.
        """
        client: LspClient = await group.start(
            partial(
                cls._hosted,
                list(argv),
                Path(cwd),
                env,
                on_notification,
                request_timeout,
                stderr_lines,
            )
        )
        return client

    @classmethod
    async def _hosted(
        cls,
        argv: list[str],
        cwd: Path,
        env: Mapping[str, str] | None,
        on_notification: NotificationHandler | None,
        request_timeout: float,
        stderr_lines: int,
        *,
        task_status: TaskStatus[LspClient],
    ) -> None:
        launch = cls.launch(
            argv,
            cwd=cwd,
            env=env,
            request_timeout=request_timeout,
            stderr_lines=stderr_lines,
            on_notification=on_notification,
        )
        async with launch as client:
            task_status.started(client)
            await client._closed.wait()

    def spawn(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run ``func(*args)`` in the client's task group; it is cancelled when the client ends."""
        self._tg.start_soon(func, *args)

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def marker(self) -> str:
        """The session marker every process of the server's tree carries (``reaper``)."""
        return self._proc.marker

    @property
    def descendants(self) -> frozenset[int]:
        """Pids the shared scan (`scanner`) has seen below the server and not seen end."""
        return frozenset(known.pid for known in self._proc.known)

    @property
    def returncode(self) -> int | None:
        return self._proc.popen.poll()

    @property
    def alive(self) -> bool:
        return not self._exited.is_set() and self._phase != "closed"

    @property
    def exit_error(self) -> ServerExited | None:
        return self._exit_error

    async def wait_exited(self) -> None:
        await self._exited.wait()

    async def initialize(self, params: dict[str, Any], timeout: float | None = None) -> Any:
        """``initialize``, then ``initialized`` at once; returns the server's result."""
        if self._phase != "new":
            raise ClientStateError(f"initialize is not allowed in phase {self._phase!r}")
        self._phase = "initializing"
        pending = await self._start_request("initialize", params)
        try:
            result = await pending.result(timeout)
            await self._send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        except BaseException:
            self._phase = "failed"
            raise
        self._phase = "ready"
        return result

    async def shutdown(self, timeout: float = 5.0) -> None:
        """``shutdown`` then ``exit`` (both without params, as Lean requires)."""
        if self._phase != "ready" or not self.alive:
            return
        self._phase = "shutting-down"
        try:
            pending = await self._start_request("shutdown", None)
            await pending.result(timeout)
        finally:
            self._phase = "shut-down"
            with suppress(LspError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await self._send({"jsonrpc": "2.0", "method": "exit"})

    async def close(self, grace: float = 2.0) -> None:
        """Shut down politely if possible, then kill the whole process tree."""
        if self._phase == "closed":
            return
        if self._phase == "ready" and self.alive:
            try:
                await self.shutdown(timeout=grace)
                with anyio.move_on_after(grace):
                    await self._exited.wait()
            except LspError:
                pass
        self._phase = "closed"
        try:
            await anyio.to_thread.run_sync(process.kill_tree, self._proc)
            error = self._exit_error or ServerExited(self.returncode, self.stderr.snapshot())
            self._fail_all(error)
            if self._stop_reading is not None:  # before its descriptor closes
                self._stop_reading()
            for stream in (self._stdin, self._stdout, self._stderr):
                await stream.aclose()
        finally:
            self._closed.set()

    # sending

    def _check_ready(self) -> None:
        if self._exit_error is not None:
            raise self._exit_error
        if self._phase != "ready":
            raise ClientStateError(f"the client is in phase {self._phase!r}, not 'ready'")

    async def send_request(self, method: str, params: Any = None) -> PendingRequest:
        """Put a request on the wire; ``params`` defaults to ``{}`` (Lean requires them)."""
        self._check_ready()
        return await self._start_request(method, {} if params is None else params)

    async def request(self, method: str, params: Any = None, timeout: float | None = None) -> Any:
        pending = await self.send_request(method, params)
        return await pending.result(timeout)

    async def notify(self, method: str, params: Any = None) -> None:
        self._check_ready()
        message = {"jsonrpc": "2.0", "method": method, "params": {} if params is None else params}
        await self._send(message)

    async def _start_request(self, method: str, params: Any) -> PendingRequest:
        if self._exit_error is not None:
            raise self._exit_error
        request_id = next(self._ids)
        waiter = _Waiter(method, self._loop)
        self._pending[request_id] = waiter
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._send(message)
        except BaseException:
            self._pending.pop(request_id, None)
            raise
        return PendingRequest(self, request_id, waiter)

    async def _send(self, message: dict[str, Any]) -> None:
        frame = encode_message(message)
        lock = self._send_lock
        try:  # uncontended: no yield to the loop (anyio's ``acquire`` always yields once)
            lock.acquire_nowait()
        except anyio.WouldBlock:
            await lock.acquire()
        try:
            await self._stdin.send(frame)
            self.bytes_sent += len(frame)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as error:
            broken: Exception = error
        else:
            return
        finally:
            lock.release()
        raise await self._exit_failure() from broken

    async def _exit_failure(self) -> ServerExited:
        """The error of a server found gone while writing, once its exit has been handled."""
        if self._phase != "closed":  # the reader sees the end of stdout and records the exit
            with anyio.move_on_after(STDERR_EOF_WAIT_S + 2.5):
                await self._exited.wait()
        return self._exit_error or ServerExited(self.returncode, self.stderr.snapshot())

    def _forget(self, request_id: int, send_cancel: bool) -> None:
        if self._pending.pop(request_id, None) is not None and send_cancel and self.alive:
            self._tg.start_soon(self._send_quietly, "$/cancelRequest", {"id": request_id})

    async def _send_quietly(self, method: str, params: Any) -> None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        with (
            anyio.move_on_after(5),
            anyio.CancelScope(shield=True),
            suppress(LspError, anyio.BrokenResourceError, anyio.ClosedResourceError),
        ):
            await self._send(message)

    # receiving

    def add_notification_handler(
        self, method: str | None, handler: NotificationHandler
    ) -> Callable[[], None]:
        """Call ``handler(method, params)`` for ``method`` (``None``: every notification).

        Handlers run in the reader (a loop callback) and must not block. Returns a function
        removing it.
        """
        self._handlers.setdefault(method, []).append(handler)
        return lambda: self._handlers.get(method, []).remove(handler)

    async def _read_loop(self) -> None:
        try:
            if _asyncio_loop() is not None:
                await self._read_in_callback()
            else:
                reader = FrameReader(self._stdout)
                while (message := await reader.read()) is not None:
                    self._dispatch(message)
        except (FramingError, anyio.ClosedResourceError, anyio.BrokenResourceError) as error:
            self.stderr.lines.append(f"[lean-beam] LSP stream error: {error}")
            if isinstance(error, FramingError):
                self._violation = str(error)
        await self._on_exit()

    async def _read_in_callback(self) -> None:
        """Read and dispatch frames in a loop reader callback, registered once.

        A reader task would cost an ``add_reader``/``remove_reader`` pair and one more loop
        turn per message before the caller's event is set.
        """
        loop = asyncio.get_running_loop()
        if self._stdout.closed:
            raise anyio.ClosedResourceError
        fd = self._stdout.fileno()
        frames = FrameBuffer()
        ended = anyio.Event()
        failure: list[BaseException] = []

        def stop(error: BaseException | None) -> None:
            if ended.is_set():  # the descriptor may be closed and its number reused by now
                return
            if error is not None:
                failure.append(error)
            loop.remove_reader(fd)
            self._stop_reading = None
            ended.set()

        def on_readable() -> None:
            try:
                data = os.read(fd, 65536)
                if data:
                    for message in frames.feed(data):
                        self._dispatch(message)
                    return
                frames.finish()
            except BlockingIOError:
                return
            except OSError as error:
                stop(anyio.BrokenResourceError(str(error)))
                return
            except BaseException as error:
                stop(error)
                return
            stop(None)

        self._stop_reading = partial(stop, anyio.ClosedResourceError())
        loop.add_reader(fd, on_readable)
        try:
            await ended.wait()
        finally:
            stop(None)
        if failure:
            raise failure[0]

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if isinstance(method, str) and "id" in message:
            self._server_request(message["id"], method, message.get("params"))
        elif isinstance(method, str):
            for handler in [*self._handlers.get(method, []), *self._handlers.get(None, [])]:
                handler(method, message.get("params"))
        elif isinstance(message.get("id"), int):
            waiter = self._pending.pop(message["id"], None)
            if waiter is None:
                return  # a late answer to an abandoned request
            if isinstance(message.get("error"), dict):
                waiter.error = response_error(waiter.method, message["error"])
            else:
                waiter.result = message.get("result")
            waiter.set()

    def _server_request(self, request_id: Any, method: str, params: Any) -> None:
        self.server_requests.append((method, params))
        if method in ACKNOWLEDGED_SERVER_REQUESTS:
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": None}
        else:
            reply = {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": -32601, "message": f"lean-beam does not handle {method}"},
            }
        self._tg.start_soon(self._send_reply, reply)

    async def _send_reply(self, reply: dict[str, Any]) -> None:
        with anyio.move_on_after(5):
            with suppress(LspError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await self._send(reply)

    async def _drain_stderr(self) -> None:
        try:
            while True:
                self.stderr.feed(await self._stderr.receive())
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        finally:
            self._stderr_done.set()

    async def _on_exit(self) -> None:
        with anyio.move_on_after(2):
            while self._proc.popen.poll() is None:
                await anyio.sleep(0.02)
        # Its last words (why it died) may still sit in the stderr pipe; a descendant that
        # inherited stderr can hold it open, hence the bound.
        with anyio.move_on_after(STDERR_EOF_WAIT_S):
            await self._stderr_done.wait()
        error = ServerExited(self.returncode, self.stderr.snapshot())
        if self._violation is not None:
            error = ProtocolViolation(self._violation, self.returncode, self.stderr.snapshot())
        self._exit_error = error
        self._exited.set()
        self._fail_all(error)
        if self._phase != "closed":
            await anyio.to_thread.run_sync(process.kill_tree, self._proc)

    def _fail_all(self, error: LspError) -> None:
        waiters, self._pending = self._pending, {}
        for waiter in waiters.values():
            waiter.error = error
            waiter.set()


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # another anyio backend
        return None


def path_uri(path: Path) -> str:
    return path.absolute().as_uri()


__all__ = ["LspClient", "PendingRequest", "path_uri"]
