"""The broker: the Lean operations one server process offers, over its cached sessions.

The MCP layer holds one ``Broker``, hands it the server's long-lived task group (``attach``) and
runs each tool as ``run(root, path, operation, args, ctx)``: the broker resolves the path, checks
it can be read before a Lean session starts or changes, and runs the operation on the
workspace's session. Failures are ``BrokerError``s (code, message, data); nothing here knows MCP.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import anyio
from anyio.abc import TaskGroup

from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.session.manager import ManagerConfig, SessionManager
from beam_runtime.broker.session.paths import off_loop_settle, read_snapshot, resolve_source_async
from beam_runtime.broker.session.reporting import Context
from beam_runtime.broker.session.session import LeanSession
from beam_runtime.broker.speculation.pool import PoolConfig

if TYPE_CHECKING:
    from beam_runtime.broker.arguments import FeedbackArgs
    from beam_runtime.broker.results import DropResult, FeedbackResult
    from beam_runtime.broker.speculation.speculation import Speculation
    from beam_runtime.search.service import SearchService

A = TypeVar("A")  # the arguments an operation reads, handed through by ``run``
Operation = Callable[[LeanSession, A, Context], Awaitable[Any]]


class BrokerConfig(NamedTuple):
    """Everything the broker is configured with (the MCP layer fills it from its settings)."""

    manager: ManagerConfig
    scratch: PoolConfig


class Broker:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.manager: SessionManager | None = None
        self._speculation: Speculation | None = None
        self._unadopted: weakref.WeakSet[LeanSession] = weakref.WeakSet()
        self._group: TaskGroup | None = None
        self._search: SearchService | None = None

    def attach(self, group: TaskGroup) -> None:
        """The server's long-lived task group: session readers and the idle reaper run there."""
        from beam_runtime.lsp.client import LspClient

        self._group = group
        self.manager = SessionManager(self.config.manager, partial(LspClient.open_in, group))
        self.manager.session_observers.append(self._adopt)

        def host_barriers(session: LeanSession) -> None:  # bounded waits (waiting.py)
            session.spawn = group.start_soon

        self.manager.session_observers.append(host_barriers)
        group.start_soon(self.manager.reap_idle)

    @property
    def speculation(self) -> Speculation:
        """Handles and scratch documents, made by the first tool that needs them.

        Until then no session has a handle or a scratch document, so the sessions started
        before are adopted only now (a first Lean call does not import any of it).
        """
        if self._speculation is None:
            from beam_runtime.broker.speculation.speculation import Speculation

            made = Speculation(self.config.scratch)
            for session in list(self._unadopted):
                made.adopt(session)
            self._unadopted.clear()
            if self._group is not None:
                self._group.start_soon(made.scratch.reap_idle)
            self._speculation = made
        return self._speculation

    def _adopt(self, session: LeanSession) -> None:
        if self._speculation is None:
            self._unadopted.add(session)
        else:
            self._speculation.adopt(session)

    def _manager(self) -> SessionManager:
        if self.manager is None:
            raise BrokerError("internalError", "the Lean broker was not attached to the server")
        return self.manager

    async def run(
        self,
        root: str,
        path: str | None,
        operation: Operation[A],
        args: A,
        ctx: Context,
        *,
        rereads: bool = False,
    ) -> Any:
        """Runs ``operation`` on the session of ``root``.

        A named ``path`` is resolved and read first, so a bad path fails before Lean starts or
        changes; an operation that ``rereads`` its file itself skips that read once the session
        is live (its own read then reports the problem).
        """
        manager = self._manager()
        source = None
        if path is None:  # the caller's check of the root (if any) before the session is used
            await off_loop_settle(root)
        elif not (rereads and _alive(manager, root)):
            source = await resolve_source_async(root, path)
            await read_snapshot(manager.sources, source)
        async with manager.use(root) as session:
            if source is not None and path is not None and session.known_source(path) is None:
                session.remember_source(path, source)  # the operation's read checks it again
            return await operation(session, args, ctx)

    async def drop(self, root: str) -> DropResult:
        dropped, handles = await self._manager().drop(root)
        result: DropResult = {
            "workspace": {"root": root},
            "dropped": dropped,
            "invalidated_handles": handles,
        }
        if not dropped:
            result["reason"] = "notFound"
        return result

    async def feedback(self, args: FeedbackArgs, root: str, ctx: Context) -> FeedbackResult:
        from beam_runtime.broker.feedback.feedback import feedback_report
        from beam_runtime.broker.results import FeedbackResult, shaped

        return shaped(FeedbackResult, await feedback_report(args, root, self._manager(), ctx))

    def searches(self) -> SearchService:
        """``lean_search``'s indexes; no Lean session is involved."""
        if self._search is None:
            from beam_runtime.search.service import SearchService

            self._search = SearchService()
        return self._search

    def runtime_active(self) -> bool:
        return self.manager is not None and self.manager.ever_started

    def workspace_sessions(self) -> dict[str, dict[str, Any]]:
        return {} if self.manager is None else self.manager.describe()

    async def aclose(self) -> None:
        if self._search is not None:
            self._search.close()
        if self.manager is not None:
            with anyio.CancelScope(shield=True):
                await self.manager.aclose()


def _alive(manager: SessionManager, root: str) -> bool:
    session = manager.cached(root)
    return session is not None and session.alive
