"""The sessions of one server process: one per canonical root, created lazily, capped, reaped.

Several roots (and toolchains) live side by side. At most ``max_workspaces`` sessions are kept;
making room closes the least recently used idle one. A session idle for ``idle_timeout`` is
stopped by a reaper task. A dead session is replaced on the next request with ``epoch + 1``.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from beam_runtime.broker.config import ManagerConfig
from beam_runtime.broker.errors import BrokerError, starting
from beam_runtime.broker.session.fingerprint import SourceCache
from beam_runtime.broker.session.launch import resolve_launch
from beam_runtime.broker.session.session import ChannelOpener, LeanSession
from beam_runtime.broker.session.versions import VersionStore

if TYPE_CHECKING:
    import psutil


class SessionManager:
    def __init__(self, config: ManagerConfig, opener: ChannelOpener) -> None:
        self.config = config
        self.opener = opener
        self.sessions: OrderedDict[str, LeanSession] = OrderedDict()
        self.epochs: dict[str, int] = {}
        self.versions = VersionStore()
        self.sources = SourceCache()  # outlives sessions, like versions
        self.ever_started = False
        self._creating: dict[str, anyio.Lock] = {}
        self._starts: dict[str, _Start] = {}
        # Runs a start in the server's long-lived task group, so that it outlives the call
        # that gave up waiting for it (None: starts run inside the call, unbounded).
        self.spawn: Callable[..., Any] | None = None
        self._closing = False
        # Called with each new session before it starts (speculative execution hooks in here).
        self.session_observers: list[Callable[[LeanSession], None]] = []

    # -- use -------------------------------------------------------------------------------

    def use(self, root: str, wait_s: float | None = None) -> SessionUse:
        """``async with manager.use(root, wait_s) as session``: the live session, counted as busy.

        A session that must be started first is started in the background (``spawn``) and
        waited for at most ``wait_s`` seconds (None: as long as it takes); past that the call
        fails with ``starting`` while the start goes on, and the next call joins it.
        """
        return SessionUse(self, root, wait_s)

    def cached(self, root: str) -> LeanSession | None:
        return self.sessions.get(root)

    async def _session_within(self, root: str, wait_s: float | None) -> LeanSession:
        began = time.monotonic()
        for attempt in range(2):
            current = self.sessions.get(root)
            if current is not None and current.alive:
                self.sessions.move_to_end(root)
                return current
            if self.spawn is None:
                return await self._session(root)
            left = None if wait_s is None else max(0.0, wait_s - (time.monotonic() - began))
            session = await self._join_start(root, left, began)
            if session.alive or attempt:  # reaped before this call woke: start once more
                return session
        raise AssertionError("unreachable")

    async def _join_start(self, root: str, wait_s: float | None, began: float) -> LeanSession:
        start = self._starts.get(root)
        if start is None:
            assert self.spawn is not None
            start = self._starts[root] = _Start()
            self.spawn(self._run_start, root, start)
        with anyio.move_on_after(wait_s):
            await start.done.wait()
        if not start.done.is_set():
            raise starting(int((time.monotonic() - began) * 1000))
        if start.error is not None or start.session is None:
            raise start.error or BrokerError("internalError", "the Lean server did not start")
        return start.session

    async def _run_start(self, root: str, start: _Start) -> None:
        try:
            start.session = await self._session(root)
            start.session.last_used = time.monotonic()  # not idle before its callers wake
        except Exception as exc:  # handed to every call waiting on this start
            start.error = exc
        finally:
            if start.session is None and start.error is None:  # cancelled: the server stops
                start.error = BrokerError(
                    "requestCancelled", "the Lean server's start was cancelled"
                )
            if self._starts.get(root) is start:
                del self._starts[root]
            start.done.set()

    async def _session(self, root: str) -> LeanSession:
        current = self.sessions.get(root)
        if current is not None and current.alive:
            self.sessions.move_to_end(root)
            return current
        async with self._creating.setdefault(root, anyio.Lock()):
            current = self.sessions.get(root)
            if current is not None and current.alive:
                return current
            if current is not None:
                self.sessions.pop(root, None)
                await current.stop()
            await self._make_room()
            return await self._create(root)

    async def _create(self, root: str) -> LeanSession:
        launch = await resolve_launch(
            root,
            lean_cmd=self.config.lean_cmd,
            beam_cli=self.config.beam_cli,
            timeout_s=self.config.config_timeout_s,
        )
        if self.config.memory_scope is not None:
            from beam_runtime.lsp.memory import SCOPE_VARIABLE

            launch = launch._replace(env={**launch.env, SCOPE_VARIABLE: self.config.memory_scope})
        epoch = self.epochs.get(root, 0) + 1
        self.epochs[root] = epoch
        session = LeanSession(root, epoch, launch, self.config.limits, self.versions, self.sources)
        session.memory_cap = self.config.worker_memory_max
        for observer in self.session_observers:
            observer(session)
        self.ever_started = True
        await session.start(self.opener)
        self.sessions[root] = session
        return session

    async def _make_room(self) -> None:
        while len(self.sessions) >= self.config.max_workspaces:
            idle = [s for s in self.sessions.values() if s.in_flight == 0]
            if not idle:
                return  # every session is busy: run over the cap rather than fail the call
            victim = idle[0]  # OrderedDict order: least recently used first
            self.sessions.pop(victim.root, None)
            await victim.stop()

    # -- drop, idle, shutdown ---------------------------------------------------------------

    async def drop(self, root: str) -> tuple[bool, int]:
        session = self.sessions.pop(root, None)
        if session is None:
            return False, 0
        handles = session.handle_count()
        session.stop_reason = "workspaceDropped"
        await session.stop()
        return True, handles

    async def reap_idle(self, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        limit = self.config.idle_timeout_s
        task_status.started()
        if limit <= 0:
            return
        tick = max(0.02, min(limit / 4, 5.0))
        while not self._closing:
            await anyio.sleep(tick)
            now = time.monotonic()
            for session in list(self.sessions.values()):
                stale = now - session.last_used >= limit
                if session.in_flight == 0 and (stale or not session.alive):
                    if self.sessions.get(session.root) is session:
                        self.sessions.pop(session.root, None)
                    await session.stop()

    async def aclose(self) -> None:
        self._closing = True
        sessions = list(self.sessions.values())
        self.sessions.clear()
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as group:
                for session in sessions:
                    group.start_soon(session.stop)

    # -- reporting -----------------------------------------------------------------------------

    def describe(self) -> dict[str, dict[str, Any]]:
        """``beam_stats`` session objects per cached root."""
        return {root: _describe(session) for root, session in self.sessions.items()}


def _describe(session: LeanSession) -> dict[str, Any]:
    pid = session.channel.pid if session.channel is not None else None
    family = _tree(pid)
    workers = [p for p in family if _is_worker(p)]
    return {
        "active": session.alive,
        "epoch": session.epoch,
        "pid": pid,
        "rss_bytes": _rss(family) if family else None,
        "open_documents": len(session.documents),
        "scratch_documents": len(session.uri_observers),
        "lean_workers": {"count": len(workers), "rss_bytes": _rss(workers)},
        "lean": {**session.lean_work(), "rss_bytes": _rss(workers)},
    }


def _tree(pid: int | None) -> list[psutil.Process]:
    if pid is None:
        return []
    import psutil  # 8 ms of start-up that only ``beam_stats`` needs here

    try:
        process = psutil.Process(pid)
        return [process, *process.children(recursive=True)]
    except psutil.Error:
        return []


def _is_worker(process: psutil.Process) -> bool:
    """Lean's watchdog starts one ``lean --worker`` process per open document."""
    import psutil

    try:
        return "--worker" in process.cmdline()
    except psutil.Error:
        return False


def _rss(processes: list[psutil.Process]) -> int:
    import psutil

    total = 0
    for process in processes:
        try:
            total += process.memory_info().rss
        except psutil.Error:
            continue
    return total


def start_reaper(group: TaskGroup, manager: SessionManager) -> None:
    group.start_soon(manager.reap_idle)


class _Start:
    """One workspace's session start, shared by the calls that wait for it."""

    __slots__ = ("done", "error", "session")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.session: LeanSession | None = None
        self.error: Exception | None = None


class SessionUse:
    """One call's use of a session: started if needed, never reaped while in use."""

    def __init__(self, manager: SessionManager, root: str, wait_s: float | None = None) -> None:
        self._manager = manager
        self._root = root
        self._wait_s = wait_s
        self._session: LeanSession | None = None

    async def __aenter__(self) -> LeanSession:
        session = await self._manager._session_within(self._root, self._wait_s)
        session.in_flight += 1
        self._session = session
        return session

    async def __aexit__(self, *exc: object) -> None:
        session = self._session
        if session is not None:
            session.in_flight -= 1
            session.last_used = time.monotonic()
