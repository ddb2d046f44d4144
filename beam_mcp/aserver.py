"""Phase 2 of the server (see `server.py`): stdin on the loop, writer, calls on worker tasks."""

from __future__ import annotations

import asyncio
import collections
import fcntl
import os
import select
import stat
import struct
import termios
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from beam_mcp.backend import LeanBackend, ToolContext, create_backend
from beam_mcp.errors import ToolError, system_tool_error
from beam_mcp.progress import LogPolicy, Reporter
from beam_mcp.router import PendingCall, Router
from beam_mcp.stdio import handle_line, long_lived, pollable, write_all
from beam_mcp.wire import RequestId, RpcError, id_key
from beam_mcp.workspace import (
    KnownRoots,
    RootMoved,
    canonical_root_async,
    check_root,
    check_root_async,
)
from beam_runtime import safe_read

if TYPE_CHECKING:
    from beam_mcp.server import Server

Item = tuple[bytes, Callable[[], None] | None]
SHUTDOWN_GRACE_S = 5.0
DELIVERY_WAIT_S = 5.0  # how long an answer waits for the client to read earlier notifications
_BATCH = 256
_BATCH_BYTES = 1 << 20  # a batch stops growing past this: joining it copies every byte
_READ_CHUNK = 1 << 16


class WriterState:  # plain classes here: a dataclass costs half a millisecond to define
    """Shared by the outbox and the writer task (both on the event-loop thread)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.queued = 0  # items handed to the writer's stream and not yet taken
        self.queued_bytes = 0  # bytes queued and not written yet (back-pressure on stdin)
        # After each batch: stdin may be read again.
        self.on_written: Callable[[], None] | None = None
        self.busy = False  # the writer is writing a batch
        self.broken = False  # the client closed our stdout: output is discarded
        self.idle = anyio.Event()  # set when nothing is queued
        self.unread_query = _unread_query(fd)
        self.writable: Any = select.poll()  # watches `fd` for POLLOUT
        self.writable.register(fd, select.POLLOUT)


def _unread_query(fd: int) -> int | None:
    """How to ask the kernel for the bytes the client has not read yet: FIONREAD on a pipe,
    SIOCOUTQ on a socket (Node's child_process gives its children socket pairs); else none."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        mode = 0
    if stat.S_ISFIFO(mode):
        return termios.FIONREAD
    if stat.S_ISSOCK(mode):
        return getattr(termios, "TIOCOUTQ", None)  # SIOCOUTQ on Linux
    return None


class AsyncOutbox:
    """Output in the order of `send` calls.

    Notifications queue for the writer task, which batches them. A call that sent any
    waits until they are written before its answer is queued too: the TypeScript SDK drops a
    progress notification that arrives in one read with its answer. Any other message is
    written at once from the loop thread when the writer is idle and the write cannot block
    (`_fits`), which spares a task switch and a thread hop per answer.
    """

    def __init__(self, stream: MemoryObjectSendStream[Item], state: WriterState) -> None:
        self._stream = stream
        self._state = state
        self.direct = True

    def send(self, data: bytes, done: Callable[[], None] | None = None) -> None:
        state = self._state
        idle = not state.busy and not state.queued
        if self.direct and idle and (state.broken or _fits(state, data)):
            _write_now(state, data)
            if done is not None:
                done()
            return
        self.queue(data, done)

    def queue(self, data: bytes, done: Callable[[], None] | None = None) -> None:
        state = self._state
        if state.idle.is_set():
            state.idle = anyio.Event()
        state.queued += 1
        state.queued_bytes += len(data)
        self._stream.send_nowait((data, done))

    async def drained(self) -> None:
        """Returns once everything queued so far has been written (or discarded)."""
        state = self._state
        while state.queued or state.busy:
            await state.idle.wait()

    async def delivered(self) -> None:
        """Returns once the client has read everything written so far (bounded).

        The TypeScript SDK handles a notification one microtask after the read that brought it
        but an answer at once, so a progress notification read together with its call's answer
        finds its handler gone and is dropped. Written is not read: on a busy machine the client
        may take both in one read, so the answer waits until nothing is left unread.
        """
        state = self._state
        query = state.unread_query
        if query is None or state.broken:
            return
        with anyio.move_on_after(DELIVERY_WAIT_S):
            while _unread(state.fd, query):
                await anyio.sleep(0.0005)


Job = Callable[[], Awaitable[None]]


class Workers:
    """Long-lived tasks of the server's group that run calls one after another.

    Handing a call to an idle worker resolves the loop future it waits on: one loop turn.
    Spawning an anyio task costs about four times that before the task first runs, plus its
    wind-down. A worker that finishes while `keep_idle` others already wait ends instead.
    """

    def __init__(self, tg: TaskGroup, keep_idle: int = 8) -> None:
        self._tg = tg
        self._keep_idle = keep_idle
        self._idle: list[asyncio.Future[Job]] = []

    def run(self, job: Job) -> None:
        while self._idle:
            slot = self._idle.pop()  # the most recently idle worker: its frames are warm
            if not slot.done():  # a worker cancelled while idle (shutdown) left a done one
                slot.set_result(job)
                return
        self._tg.start_soon(self._work, job)

    async def _work(self, job: Job) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await job()
            if len(self._idle) >= self._keep_idle:
                return
            slot: asyncio.Future[Job] = loop.create_future()
            self._idle.append(slot)
            job = await slot


class Flight:
    """One running backend call."""

    def __init__(self, call: PendingCall) -> None:
        self.call = call
        self.scope = anyio.CancelScope()
        self.answered = False
        self.cancelled = False
        self.notified = False  # a notification of this call was sent
        self.done = False  # answered, or cancelled and accounted for
        self.size = 0  # bytes of the request line, counted against the in-flight byte bound
        self.root_resolved = False  # call.root is canonical
        self._finished: anyio.Event | None = None

    def finish(self) -> None:
        self.done = True
        if self._finished is not None:
            self._finished.set()

    def finished(self) -> anyio.Event:
        """An event set when the call is done; built only for those who wait (drop, shutdown)."""
        if self._finished is None:
            self._finished = anyio.Event()
            if self.done:
                self._finished.set()
        return self._finished


async def _moved(given: str, prelude: safe_read.Prelude) -> bool:
    """Whether the root moved, asked off the loop when no trip of the call took the check."""
    check = prelude.take()
    if check is None:
        return False
    try:
        await check_root_async(given, check)
    except RootMoved:
        return True
    return False


class AsyncServer:
    def __init__(
        self, server: Server, tg: TaskGroup, out: MemoryObjectSendStream[Item], state: WriterState
    ) -> None:
        self.server = server
        self.router: Router = server.router
        self.settings = server.settings
        self.tg = tg
        self.out = out
        self.flights: dict[tuple[str, RequestId], Flight] = {}
        self.fence: anyio.Event | None = None  # set when the latest drop finished
        self._backend: LeanBackend | None = None
        self._served: Any = None  # beam_runtime.served.Recorder, made at the first call
        self.workers = Workers(tg)
        self.roots = KnownRoots()  # roots as given -> canonical, checked again by each call
        self.outbox = AsyncOutbox(out, state)
        self.state = state
        # Lines read and not handled yet: they wait while output or calls are over their bound.
        self.backlog: collections.deque[bytes | RpcError] = collections.deque()
        self._draining = False
        self._progress: anyio.Event | None = None  # set when the backlog may move again
        self._stdin = StdinGate()
        self._output_bound = self.settings.output_buffer_kb * 1024
        self._input_bound = self.settings.input_in_flight_kb * 1024
        self.flight_bytes = 0  # request bytes of the calls running
        state.on_written = self.drain_backlog
        server.serve_through(self)

    def runtime_active(self) -> bool:
        return self._backend is not None and self._backend.runtime_active()

    def sessions(self) -> dict[str, dict[str, Any]]:
        return {} if self._backend is None else self._backend.workspace_sessions()

    @property
    def backend(self) -> LeanBackend:
        if self._backend is None:
            with long_lived():
                self._backend = create_backend(self.settings)
            attach = getattr(self._backend, "attach", None)
            if attach is not None:  # the broker runs session readers in the server's group
                attach(self.tg)
        return self._backend

    # ------------------------------------------------------------ input

    async def pump(self, first: PendingCall, rest: list[Any]) -> None:
        """Feeds input to the router until the end of input or a signal.

        Lines read by the loop itself (`_read_stdin`) are fed as they arrive. The inbox brings
        signals, the end of input and, when the reader thread still reads, its batches: whoever
        puts an item wakes the loop (`Inbox.on_put`), the callback sets whichever event is
        current when it runs, and the loop empties the inbox before it waits again.
        """
        self.admit(first)
        self.feed(rest)
        inbox = self.server.inbox
        loop = asyncio.get_running_loop()
        arrived = anyio.Event()

        def wake() -> None:  # on the loop: the event current at that moment
            arrived.set()

        def on_put() -> None:  # in the reader thread, a signal handler or the loop
            loop.call_soon_threadsafe(wake)

        inbox.on_put = on_put
        self._stdin = self._read_stdin(loop)
        self.drain_backlog()  # the gate learns whether to read at all yet
        try:
            while True:
                arrived = anyio.Event()
                while (item := inbox.get_nowait()) is not None:
                    if self.server.is_end(item):
                        if self.server.is_eof(item):
                            await self._drain_rest()
                        return
                    self.feed(item)
                await arrived.wait()
        finally:
            self._stdin.stop()
            inbox.on_put = None
            self.flush_backlog()

    def _read_stdin(self, loop: asyncio.AbstractEventLoop) -> StdinGate:
        """Reads stdin in a loop callback instead of the thread, when the loop can wait on it.

        A line then reaches the router in the loop turn it arrives, without a thread hop and a
        wake-up of the loop through its self-pipe (about 0.1 ms per call on two cores). Lines
        the thread queued before it stopped are still in the inbox and go first. When the
        thread keeps reading (stdin is a file), the gate pauses the thread instead.
        """
        reader = self.server.reader
        if not pollable(reader.fd):
            return ThreadGate(reader.gate)
        splitter = reader.hand_over()
        if splitter is None:
            return StdinGate()
        fd = reader.fd

        def on_readable() -> None:
            try:
                chunk = os.read(fd, _READ_CHUNK)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                chunk = b""  # a broken stdin is the end of input
            if chunk:
                self.feed(splitter.feed(chunk))
                return
            gate.stop()
            self.feed(splitter.finish())
            self.server.end_of_input()

        gate = LoopGate(loop, fd, on_readable)
        return gate

    def feed(self, lines: list[bytes | RpcError]) -> None:
        self.backlog.extend(lines)
        self.drain_backlog()

    def saturated(self) -> bool:
        """Whether new lines must wait: too much unwritten output, or too many calls running."""
        return (
            (self.state.queued_bytes >= self._output_bound and not self.state.broken)
            or len(self.flights) >= self.settings.max_calls_in_flight
            or (bool(self.flights) and self.flight_bytes >= self._input_bound)
        )

    def drain_backlog(self) -> None:
        """Handles waiting lines while the bounds allow; reads stdin only when none wait.

        Called when lines arrive, after each written batch and when a call ends. Lines are
        handled in order and each exactly once, so a client that does not read gets every
        answer later, never fewer.
        """
        if self._progress is not None:
            self._progress.set()
        if self._draining:
            return
        self._draining = True
        try:
            backlog = self.backlog
            while backlog and not self.saturated():
                self._handle(backlog.popleft())
        finally:
            self._draining = False
        self._stdin.allow(not backlog and not self.saturated())

    async def _drain_rest(self) -> None:
        """At the end of input: the lines still waiting are handled within the bounds too."""
        while self.backlog:
            self._progress = anyio.Event()
            self.drain_backlog()
            if self.backlog:
                await self._progress.wait()
        self._progress = None

    def flush_backlog(self) -> None:
        """On a signal: every line read is handled at once (calls are then cancelled)."""
        while self.backlog:
            self._handle(self.backlog.popleft())

    def _handle(self, line: bytes | RpcError) -> None:
        pending = handle_line(self.router, line)
        if pending is not None:
            self.admit(pending, len(line) if isinstance(line, bytes) else 0)

    def admit(self, call: PendingCall, size: int = 0) -> None:
        flight = Flight(call)
        flight.size = size
        self.flight_bytes += size
        self.flights[id_key(call.request_id)] = flight
        if call.spec.fence:
            # A fence (a drop): earlier calls drain first, later ones wait for it.
            earlier = [f.finished() for f in self.flights.values() if f is not flight]
            self.fence = anyio.Event()
            self.tg.start_soon(self.run_drop, flight, earlier, self.fence)
        else:
            self.workers.run(partial(self.run_call, flight, self.fence))

    def cancel(self, rid: RequestId) -> None:
        flight = self.flights.get(id_key(rid))
        if flight is None or flight.answered or flight.call.spec.fence:
            return  # unknown, already answered, or not cancellable once admitted
        flight.cancelled = True
        flight.scope.cancel()

    # ------------------------------------------------------------ calls

    async def run_drop(
        self, flight: Flight, earlier: list[anyio.Event], fence: anyio.Event
    ) -> None:
        try:
            reporter = self.reporter(flight)
            reporter.progress(f"{flight.call.tool}: preparing workspace eviction")
            for event in earlier:
                await event.wait()
            await self.execute(flight, reporter)
        finally:
            fence.set()

    async def run_call(self, flight: Flight, fence: anyio.Event | None) -> None:
        reporter = self.reporter(flight)
        with flight.scope:
            if fence is not None:
                await fence.wait()
            await self.execute(flight, reporter)
        self.conclude(flight, reporter)

    async def _canonical_root(self, flight: Flight) -> None:
        """The root as given becomes canonical here, off the event loop and bounded (a root on a
        stuck mount stalls nothing); a fence (a drop) accepts a root that is gone already. An
        unusable root is the tool error raised."""
        call = flight.call
        root = await canonical_root_async(call.root, allow_vanished=call.spec.fence)
        if not call.spec.fence:
            self.roots.remember(call.root, root)
        flight.call = replace(call, root=root)
        flight.root_resolved = True

    async def _run_backend(self, flight: Flight, reporter: Reporter) -> dict[str, Any]:
        """The backend's call. A root canonicalized by an earlier call is not resolved again
        first: its check rides along with the call's first trip off the loop (`workspace`);
        when the root no longer leads where it did, it is resolved afresh and the call runs
        again."""
        call = flight.call
        given = call.root
        known = None if call.spec.fence else self.roots.get(given)
        rides = getattr(self.backend, "rides_root_checks", None)
        if known is not None and (rides is None or not rides(known)):
            known = None
        if known is None:
            await self._canonical_root(flight)
            return await self._backend_call(flight.call, reporter)
        flight.call = call = replace(call, root=known)
        flight.root_resolved = True
        prelude = safe_read.Prelude(partial(check_root, given, known))
        try:
            with prelude:
                content = await self._backend_call(call, reporter)
        except Exception:
            if prelude.failure is None:
                raise  # the call's own error, the root held
        else:
            if prelude.failure is None and not await _moved(given, prelude):
                return content
        self.roots.forget(given)  # the root moved: resolve it again and run the call again
        flight.call = replace(call, root=given)
        flight.root_resolved = False
        await self._canonical_root(flight)
        return await self._backend_call(flight.call, reporter)

    async def _backend_call(self, call: PendingCall, reporter: Reporter) -> dict[str, Any]:
        ctx = ToolContext(root=call.root, reporter=reporter, settings=self.settings)
        return await self.backend.call(call.spec, call.arguments, ctx)

    def note_served(self, root: str) -> None:
        """Remember a workspace root a call accepted (`beam_runtime.served`: no I/O here)."""
        if self._served is None:
            from beam_runtime.served import Recorder

            self._served = Recorder()
        self._served.note(root)

    async def execute(self, flight: Flight, reporter: Reporter) -> None:
        # A loop timer, not a task: no task to spawn, cancel and wind down per call.
        timer: asyncio.TimerHandle | None = None
        if flight.call.token is None:
            delay = self.settings.status_delay_ms / 1000
            timer = asyncio.get_running_loop().call_later(delay, reporter.status)
        content: dict[str, Any] | None = None
        error: ToolError | None = None
        try:
            content = await self._run_backend(flight, reporter)
        except ToolError as err:
            error = err
        except OSError as exc:  # the system refused something (a denied path, a full disk)
            error = system_tool_error(flight.call.tool, exc)
        except Exception as exc:  # a backend bug becomes a tool error, not a dead server
            error = ToolError("internalError", f"{flight.call.tool} failed unexpectedly: {exc!r}")
        finally:
            if timer is not None:
                timer.cancel()
        call = flight.call
        stats_root = call.root if flight.root_resolved else None  # never one that did not resolve
        if flight.root_resolved and not call.spec.fence:
            self.note_served(call.root)
        if flight.notified:
            await self.outbox.drained()
            await self.outbox.delivered()
        reporter.close()
        flight.answered = True
        if call.spec.fence and error is None:
            self.router.stats.forget(call.root)
        self.outbox.direct = not flight.notified
        try:
            self.router.finish_call(
                call.request_id,
                call.tool,
                stats_root,
                call.admitted,
                call.modern,
                content=content,
                error=error,
            )
        finally:
            self.outbox.direct = True
        self._land(flight)
        flight.finish()
        self.drain_backlog()

    def _land(self, flight: Flight) -> None:
        """The call no longer runs: it stops counting against the bounds."""
        if self.flights.pop(id_key(flight.call.request_id), None) is flight:
            self.flight_bytes -= flight.size

    def conclude(self, flight: Flight, reporter: Reporter) -> None:
        """Bookkeeping for a call that was cancelled before it answered."""
        if flight.answered:
            return
        reporter.close()
        call = flight.call
        ms = (time.monotonic() - call.admitted) * 1000
        self.router.stats.record(call.tool, call.root, ms, "cancelled")
        self._land(flight)
        self.router.release(call.request_id)()
        flight.finish()
        self.drain_backlog()

    def reporter(self, flight: Flight) -> Reporter:
        router, call = self.router, flight.call
        level: Callable[[], str | None] = (
            (lambda: call.log_level) if call.modern else (lambda: router.legacy_level)
        )

        def send(data: bytes) -> None:
            flight.notified = True
            self.outbox.queue(data)

        return Reporter(
            request_id=call.request_id,
            tool=call.tool,
            token=call.token,
            policy=LogPolicy(level),
            send=send,
            path=call.path,
        )

    # ------------------------------------------------------------ shutdown

    async def shutdown(self) -> None:
        self.router.shutting_down = True
        for flight in list(self.flights.values()):
            if not flight.answered:
                flight.cancelled = True
                flight.scope.cancel()
        with anyio.move_on_after(SHUTDOWN_GRACE_S, shield=True):
            for flight in list(self.flights.values()):
                await flight.finished().wait()
            if self._backend is not None:
                await self._backend.aclose()


class StdinGate:
    """Whether stdin is read: nothing to gate (stdin ended, or read before phase 2)."""

    def allow(self, reading: bool) -> None:
        return None

    def stop(self) -> None:
        return None


class LoopGate(StdinGate):
    """The event loop reads stdin: pausing removes the reader, resuming adds it back."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, fd: int, callback: Callable[[], None]
    ) -> None:
        self._loop, self._fd, self._callback = loop, fd, callback
        self._reading = False
        self._stopped = False
        self.allow(True)

    def allow(self, reading: bool) -> None:
        if self._stopped or reading == self._reading:
            return
        self._reading = reading
        if reading:
            self._loop.add_reader(self._fd, self._callback)
        else:
            self._loop.remove_reader(self._fd)

    def stop(self) -> None:
        self.allow(False)
        self._stopped = True


class ThreadGate(StdinGate):
    """The reader thread reads stdin (a regular file): pausing holds it before its next read."""

    def __init__(self, gate: threading.Event) -> None:
        self._gate = gate

    def allow(self, reading: bool) -> None:
        if reading:
            self._gate.set()
        else:
            self._gate.clear()

    def stop(self) -> None:
        self._gate.set()  # let it run to the end of input; its lines are no longer fed


async def writer(state: WriterState, stream: MemoryObjectReceiveStream[Item]) -> None:
    """Writes what `AsyncOutbox` queued, in batches, through a worker thread.

    When the client closed our stdout the output is discarded; input EOF still ends the run.
    """
    async with stream:
        async for first in stream:
            batch = [first]
            size = len(first[0])
            while len(batch) < _BATCH and size < _BATCH_BYTES:
                try:
                    batch.append(stream.receive_nowait())
                except (anyio.WouldBlock, anyio.EndOfStream):
                    break
                size += len(batch[-1][0])
            state.queued -= len(batch)
            state.busy = True
            data = b"".join(item[0] for item in batch)
            if not state.broken:
                try:
                    await anyio.to_thread.run_sync(write_all, state.fd, data)
                except OSError:
                    state.broken = True
            del data
            state.busy = False
            state.queued_bytes -= size
            for _, done in batch:
                if done is not None:
                    done()
            del batch, first
            if not state.queued:
                state.idle.set()
            if state.on_written is not None:
                state.on_written()


def _write_now(state: WriterState, data: bytes) -> None:
    if state.broken:
        return
    try:
        write_all(state.fd, data)
    except OSError:
        state.broken = True


def _fits(state: WriterState, data: bytes) -> bool:
    """Whether writing `data` cannot block the loop.

    A pipe polled writable has a free page, so a write of at most `PIPE_BUF` bytes completes
    at once; a larger write on a blocking descriptor might wait for the reader.
    """
    if len(data) > select.PIPE_BUF:
        return False
    return any(event & select.POLLOUT for _, event in state.writable.poll(0))


def _unread(fd: int, query: int) -> int:
    """Bytes written to `fd` that its reader has not taken yet (0 if unknown)."""
    try:
        raw = fcntl.ioctl(fd, query, b"\0\0\0\0")
    except OSError:
        return 0
    count: int = struct.unpack("i", raw)[0]
    return count


async def _main(server: Server, first: PendingCall, rest: list[Any]) -> None:
    send, receive = anyio.create_memory_object_stream[Item](float("inf"))
    state = WriterState(server.stdout_fd)
    async with anyio.create_task_group() as outer:
        outer.start_soon(writer, state, receive)
        async with send, anyio.create_task_group() as tg:
            node = AsyncServer(server, tg, send, state)
            await node.pump(first, rest)
            await node.shutdown()
            tg.cancel_scope.cancel()


def run_async(server: Server, pending: tuple[PendingCall, list[Any]]) -> None:
    anyio.run(_main, server, pending[0], pending[1])
