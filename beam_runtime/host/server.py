"""The host process: one workspace's broker served to every agent connected to its socket.

Each accepted connection is checked (the peer's uid, then the ``host/hello`` handshake: same
protocol, same runtime id, same workspace) and then runs ``host/call`` requests through the
broker's service table (``beam_runtime/broker/entries.py``), each in its own cancel scope, with
the call's progress, status and diagnostics sent back as notifications before its answer. A
connection of role ``agent`` is a lease: its handles and scratch documents are its own and go
when it closes, and the host exits ``idle_s`` after the last agent left. Documents nobody used
for ``idle_s`` are closed even while agents stay connected (scratch documents close after their
own idle time, as in-process). Stopping, the host closes its connections before it stops Lean,
so the calls in flight end unanswered and their agents see ``backendRestarted``.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import socket
import sys
import time
from typing import Any

import anyio
from anyio.abc import SocketAttribute, SocketListener, SocketStream, TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from beam_runtime.broker.entries import ENTRIES, Fields
from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.service import Broker
from beam_runtime.broker.session.versions import VersionStore
from beam_runtime.host import protocol as p
from beam_runtime.host.config import HostConfig
from beam_runtime.host.rpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REFUSED,
    Endpoint,
    RequestId,
)
from beam_runtime.host.transport import Frames, peer_uid

_connection_ids = itertools.count(1)


def log(message: str) -> None:
    """One line on the host's stderr (its log file beside the socket)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{stamp} host[{os.getpid()}] {message}\n")
        sys.stderr.flush()


class Connection:
    """One client: its outgoing queue (answers and notifications in order) and its calls."""

    def __init__(self, host: Host, outbox: MemoryObjectSendStream[dict[str, Any]]) -> None:
        self.host = host
        self.id = f"c{next(_connection_ids)}"
        self.role: str | None = None  # set by the handshake
        self.outbox = outbox
        self.calls: dict[RequestId, anyio.CancelScope] = {}
        self.group: TaskGroup | None = None
        self.closing = anyio.Event()

    def send(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.outbox.send_nowait({"jsonrpc": "2.0", **message})

    def answer(self, request_id: RequestId, result: Any) -> None:
        self.send({"id": request_id, "result": result})

    def refuse(self, request_id: RequestId, code: int, message: str) -> None:
        self.send({"id": request_id, "error": {"code": code, "message": message}})

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    async def serve(
        self, endpoint: Endpoint, frames: Frames, receive: MemoryObjectReceiveStream[Any]
    ) -> None:
        """Reads requests and writes the outbox until either side ends the connection."""
        written = anyio.Event()
        async with anyio.create_task_group() as group:
            self.group = group
            group.start_soon(self._write, frames, receive, written)
            group.start_soon(self._read, endpoint)
            await self.closing.wait()
            for scope in list(self.calls.values()):
                scope.cancel()
            self.outbox.close()
            with anyio.move_on_after(2):  # what was queued (a refusal) goes out first
                await written.wait()
            group.cancel_scope.cancel()

    async def _write(
        self, frames: Frames, receive: MemoryObjectReceiveStream[Any], written: anyio.Event
    ) -> None:
        try:
            async with receive:
                async for message in receive:
                    await frames.send(message)
                    if "error" in message and self.role is None:
                        self.closing.set()  # a refused handshake ends here
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            self.closing.set()
        finally:
            written.set()

    async def _read(self, endpoint: Endpoint) -> None:
        await endpoint.run()
        self.closing.set()

    # -- incoming ------------------------------------------------------------------------------

    def on_request(self, request_id: RequestId, method: str, params: Any) -> None:
        if self.role is None:
            self._hello(request_id, method, params)
        elif method == p.CALL:
            scope = anyio.CancelScope()
            self.calls[request_id] = scope
            assert self.group is not None
            self.group.start_soon(self._call, request_id, params, scope)
        elif method == p.STATS:
            assert self.group is not None
            self.group.start_soon(self._stats, request_id)
        elif method == p.STOP:
            self.answer(request_id, {})
            log(f"stop requested by connection {self.id}")
            self.host.stop()
        else:
            self.refuse(request_id, METHOD_NOT_FOUND, f"unknown method {method}")

    def on_notification(self, method: str, params: Any) -> None:
        if method == p.CANCEL and isinstance(params, dict):
            scope = self.calls.get(params.get("id"))  # type: ignore[arg-type]
            if scope is not None:
                scope.cancel()

    def _hello(self, request_id: RequestId, method: str, params: Any) -> None:
        config = self.host.config
        try:
            if method != p.HELLO:
                raise p.MessageError(f"the first request must be {p.HELLO}, not {method}")
            hello: p.Hello = p.check(p.Hello, params, "hello")
        except p.MessageError as error:
            self.refuse(request_id, INVALID_REQUEST, str(error))  # the writer then closes
            return
        problem = None
        if hello["protocol"] != p.PROTOCOL:
            problem = f"host protocol {p.PROTOCOL}, client protocol {hello['protocol']}"
        elif hello["role"] == "agent" and hello["runtime_id"] != config.runtime_id:
            problem = f"host runtime {config.runtime_id}, client runtime {hello['runtime_id']}"
        elif hello.get("root", config.root) != config.root:
            problem = f"this host serves {config.root}, not {hello.get('root')}"
        if problem is not None:
            self.refuse(request_id, REFUSED, problem)  # the writer then closes
            return
        self.role = hello["role"]
        if self.role == "agent":
            self.host.joined(self)
        welcome: p.Welcome = {
            "protocol": p.PROTOCOL,
            "runtime_id": config.runtime_id,
            "pid": os.getpid(),
            "connection": self.id,
            "root": config.root,
        }
        self.answer(request_id, welcome)

    # -- work --------------------------------------------------------------------------------

    async def _call(self, request_id: RequestId, params: Any, scope: anyio.CancelScope) -> None:
        try:
            call: p.CallParams = p.check(p.CallParams, params, "call")
        except p.MessageError as error:
            self.calls.pop(request_id, None)
            self.refuse(request_id, INVALID_PARAMS, str(error))
            return
        outcome = await self.host.run(self, call, request_id, scope)
        self.calls.pop(request_id, None)
        if outcome is not None:  # None: cancelled; the client stopped waiting
            self.answer(request_id, outcome)

    async def _stats(self, request_id: RequestId) -> None:
        try:
            self.answer(request_id, await self.host.stats())
        except Exception as error:
            self.refuse(
                request_id, INTERNAL_ERROR, f"the host could not describe itself: {error!r}"
            )


class CallContext:
    """What the broker's entries see of one call: the root, the owner, where progress goes."""

    def __init__(self, host: Host, connection: Connection, request_id: Any, tool: str) -> None:
        self._host = host
        self._connection = connection
        self._call = request_id
        self._tool = tool

    @property
    def root(self) -> str:
        return self._host.config.root

    @property
    def tool(self) -> str:
        return self._tool

    @property
    def owner(self) -> str:
        return self._connection.id

    def others(self) -> int:
        return sum(1 for agent in self._host.agents if agent is not self._connection)

    def progress(self, message: str) -> None:
        self._connection.notify(p.PROGRESS, {"call": self._call, "message": message})

    def status(self, state: str = "running", message: str | None = None) -> None:
        self._connection.notify(p.STATUS, {"call": self._call, "state": state, "message": message})

    def diagnostic(self, item: dict[str, Any]) -> None:
        self._connection.notify(p.DIAGNOSTIC, {"call": self._call, "item": item})


class Host:
    def __init__(self, config: HostConfig) -> None:
        self.config = config
        self.broker = Broker(config.broker)
        self.agents: list[Connection] = []
        self.connections: set[Connection] = set()  # agents and probes
        self._all_closed = anyio.Event()
        self.busy = 0
        self.idle_since = time.monotonic()
        self.stopping = anyio.Event()
        self.group: TaskGroup | None = None

    def joined(self, connection: Connection) -> None:
        self.agents.append(connection)
        log(f"agent {connection.id} joined ({len(self.agents)} connected)")

    async def left(self, connection: Connection) -> None:
        if connection in self.agents:
            self.agents.remove(connection)
            self.idle_since = time.monotonic()
            log(f"agent {connection.id} left ({len(self.agents)} connected)")
        with anyio.CancelScope(shield=True):
            await self.broker.release_owner(connection.id, "connectionClosed")

    def stop(self) -> None:
        self.stopping.set()

    async def run(
        self,
        connection: Connection,
        call: p.CallParams,
        request_id: Any,
        scope: anyio.CancelScope,
    ) -> p.CallOutcome | None:
        tool = call["tool"]
        entry = ENTRIES.get(tool)
        if entry is None:
            return _failure("invalidInput", f"the host has no tool {tool}")
        if call["root"] != self.config.root:
            return _failure("invalidInput", f"this host serves {self.config.root}")
        ctx = CallContext(self, connection, request_id, tool)
        outcome: p.CallOutcome | None = None
        self.busy += 1
        try:
            with scope:
                try:
                    content = await entry(self.broker, Fields.of(call["arguments"]), ctx)
                    outcome = {"content": content, "runtime_active": False}
                except BrokerError as error:
                    outcome = _failure(error.code, error.message, error.data)
                except Exception as exc:  # a broker bug answers like the in-process server
                    outcome = _failure("internalError", f"{tool} failed unexpectedly: {exc!r}")
        finally:
            self.busy -= 1
            self.idle_since = time.monotonic()
        if outcome is not None:  # as in-process: whether this agent's calls have run Lean
            outcome["runtime_active"] = connection.id in self.broker.lean_users
        return outcome

    async def stats(self) -> p.HostStats:
        from beam_runtime.lsp import memory

        sessions = await anyio.to_thread.run_sync(self.broker.workspace_sessions)
        session = self.broker.manager.cached(self.config.root) if self.broker.manager else None
        documents, processes, pss = 0, 0, 0
        if session is not None and session.channel is not None:
            documents = len(session.documents) + len(session.uri_observers)
            marker = session.channel.marker

            def measure() -> tuple[int, int]:
                return memory.usage(memory.session_processes(marker))

            processes, pss = await anyio.to_thread.run_sync(measure)
        idle = 0.0 if self.busy else time.monotonic() - self.idle_since
        return {
            "root": self.config.root,
            "toolchain": self.config.toolchain,
            "runtime_id": self.config.runtime_id,
            "pid": os.getpid(),
            "socket": self.config.place.socket,
            "connections": len(self.agents),
            "documents": documents,
            "lean_processes": processes,
            "pss_bytes": pss,
            "idle_s": round(idle, 3),
            "sessions": sessions,
        }

    # -- serving -------------------------------------------------------------------------------

    async def serve(self, listener_socket: socket.socket) -> None:
        listener = await SocketListener.from_socket(listener_socket)
        async with anyio.create_task_group() as group:
            self.group = group
            self.broker.attach(group)
            if self.broker.manager is not None:
                self.broker.manager.versions = kept_versions(self.config.place.versions)
            group.start_soon(self._accept, listener)
            group.start_soon(self._watch_idle)
            group.start_soon(self._signals)
            log(f"serving {self.config.root} on {self.config.place.socket}")
            await self.stopping.wait()
            await self._shutdown(listener)
            group.cancel_scope.cancel()

    async def _accept(self, listener: Any) -> None:
        assert self.group is not None
        while True:
            try:
                stream = await listener.accept()
            except (OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            self.group.start_soon(self._connection, stream)

    async def _connection(self, stream: SocketStream) -> None:
        raw = stream.extra(SocketAttribute.raw_socket)
        try:
            uid = peer_uid(raw)
        except OSError:
            uid = -1
        if uid != os.getuid():
            log(f"refused a connection from uid {uid}")
            with contextlib.suppress(Exception):
                await stream.aclose()
            return
        frames = Frames(stream)
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](float("inf"))
        connection = Connection(self, send)
        self.connections.add(connection)
        endpoint = Endpoint(frames, connection.on_request, connection.on_notification)
        try:
            await connection.serve(endpoint, frames, receive)
        except Exception as error:  # one broken connection never takes the host down
            log(f"connection {connection.id} failed: {error!r}")
        finally:
            await self.left(connection)
            with anyio.CancelScope(shield=True):
                await frames.aclose()
            self.connections.discard(connection)
            if not self.connections:
                self._all_closed.set()

    async def _watch_idle(self) -> None:
        limit = self.config.idle_s
        tick = max(0.05, min(limit / 4, 1.0))
        while True:
            await anyio.sleep(tick)
            now = time.monotonic()
            if not self.agents and not self.busy and now - self.idle_since >= limit:
                log(f"no agent for {limit:g} s: exiting")
                self.stop()
                return
            await self._close_idle_documents(now, limit)

    async def _close_idle_documents(self, now: float, limit: float) -> None:
        manager = self.broker.manager
        for session in list(manager.sessions.values()) if manager is not None else ():
            for doc in list(session.documents.values()):
                if now - doc.last_used >= limit and await session.close_if_idle(doc.source):
                    log(f"closed {doc.source.display}: unused for {limit:g} s")

    async def _signals(self) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
            async for signum in signals:
                log(f"signal {signum}: exiting")
                self.stop()
                return

    async def _shutdown(self, listener: Any) -> None:
        """No new agent; the calls in flight end unanswered (their agents see the connection
        close: ``backendRestarted``), then Lean stops."""
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(Exception):
                await listener.aclose()
            _unlink_own(self.config.place.socket)
            if self.connections:
                self._all_closed = anyio.Event()
                for connection in list(self.connections):
                    connection.closing.set()
                with anyio.move_on_after(3):
                    await self._all_closed.wait()
            with anyio.move_on_after(10):
                await self.broker.aclose()


def kept_versions(path: str) -> VersionStore:
    """The versions an earlier host of this workspace issued, kept on disk as they are issued:
    a version number is never handed out twice, even across a host that was killed."""
    import json

    issued: dict[str, int] = {}
    with contextlib.suppress(OSError, ValueError):
        with open(path, encoding="utf-8") as handle:
            loaded = json.load(handle)
        issued = {k: v for k, v in loaded.items() if isinstance(k, str) and type(v) is int}

    def record(current: dict[str, int]) -> None:
        partial = f"{path}.{os.getpid()}"
        try:
            with open(partial, "w", encoding="utf-8") as handle:
                json.dump(current, handle)
            os.replace(partial, path)
        except OSError as error:
            log(f"cannot keep document versions in {path}: {error}")

    return VersionStore(issued, record)


def _failure(code: str, message: str, data: dict[str, Any] | None = None) -> p.CallOutcome:
    return {"error": {"code": code, "message": message, "data": data}, "runtime_active": False}


def _unlink_own(path: str) -> None:
    """Removes the socket file; this host holds the lock, so the file is its own."""
    with contextlib.suppress(OSError):
        os.unlink(path)
