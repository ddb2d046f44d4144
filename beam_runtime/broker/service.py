"""The broker: the Lean operations one server process offers, over its cached sessions.

The MCP layer holds one ``Broker``, hands it the server's long-lived task group (``attach``) and
runs each tool as ``run(root, path, operation, args, ctx)``: the broker resolves the path, checks
it can be read before a Lean session starts or changes, and runs the operation on the
workspace's session. Failures are ``BrokerError``s (code, message, data); nothing here knows MCP.
"""

from __future__ import annotations

import dataclasses
import time
import weakref
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from anyio.abc import TaskGroup

from beam_runtime.broker.config import BrokerConfig
from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.session.budget import Idle, MemoryBudget
from beam_runtime.broker.session.manager import SessionManager
from beam_runtime.broker.session.paths import off_loop_settle, read_snapshot, resolve_source_async
from beam_runtime.broker.session.reporting import Context
from beam_runtime.broker.session.session import LeanSession

if TYPE_CHECKING:
    from beam_runtime.broker.arguments import FeedbackArgs
    from beam_runtime.broker.results import DropResult, FeedbackResult
    from beam_runtime.broker.speculation.speculation import Speculation
    from beam_runtime.search.service import SearchService

A = TypeVar("A")  # the arguments an operation reads, handed through by ``run``
Operation = Callable[[LeanSession, A, Context], Awaitable[Any]]


class Broker:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.manager: SessionManager | None = None
        self._speculation: Speculation | None = None
        self._unadopted: weakref.WeakSet[LeanSession] = weakref.WeakSet()
        self._group: TaskGroup | None = None
        self._search: SearchService | None = None
        self.lean_users: set[str] = set()  # owners whose calls ran on a Lean session
        self.budget: MemoryBudget | None = None
        scope = config.manager.memory_scope
        if config.budget_bytes is not None and scope is not None:
            self.budget = MemoryBudget(config.budget_bytes, scope)

    def attach(self, group: TaskGroup) -> None:
        """The server's long-lived task group: session readers and the idle reaper run there."""
        from beam_runtime.lsp.client import LspClient

        self._group = group
        self.manager = SessionManager(self.config.manager, partial(LspClient.open_in, group))
        self.manager.session_observers.append(self._adopt)

        def host_barriers(session: LeanSession) -> None:  # bounded waits (waiting.py)
            session.spawn = group.start_soon

        self.manager.spawn = group.start_soon  # session starts outlive the calls that gave up

        self.manager.session_observers.append(host_barriers)
        if self.budget is not None:
            self.manager.session_observers.append(self._budget_gate)
        group.start_soon(self.manager.reap_idle)

    @property
    def speculation(self) -> Speculation:
        """Handles and scratch documents, made by the first tool that needs them.

        Until then no session has a handle or a scratch document, so the sessions started
        before are adopted only now (a first Lean call does not import any of it).
        """
        if self._speculation is None:
            from beam_runtime.broker.speculation.speculation import Speculation

            made = Speculation(self.config.scratch, self.config.result_bytes)
            for session in list(self._unadopted):
                made.adopt(session)
            self._unadopted.clear()
            if self._group is not None:
                self._group.start_soon(made.scratch.reap_idle)
            self._speculation = made
        return self._speculation

    def _budget_gate(self, session: LeanSession) -> None:
        budget = self.budget
        if budget is not None:
            session.admit_worker = partial(budget.admit, self.idle_workers)

    def idle_workers(self) -> list[Idle]:
        """Every open document and free scratch document, closable while nothing uses it."""
        found: list[Idle] = []
        for session in self.manager.sessions.values() if self.manager is not None else ():
            for doc in list(session.documents.values()):
                found.append(Idle(doc.last_used, partial(session.close_if_idle, doc.source)))
        if self._speculation is not None:
            registry = self._speculation.scratch
            for scratch in registry.open:
                if not scratch.busy:
                    found.append(
                        Idle(scratch.last_used, partial(registry.discard_if_idle, scratch))
                    )
        return found

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
        budget = _Budget(getattr(args, "wait_ms", None))
        source = None
        if path is None:  # the caller's check of the root (if any) before the session is used
            await off_loop_settle(root)
        elif not (rereads and _alive(manager, root)):
            source = await resolve_source_async(root, path)
            await read_snapshot(manager.sources, source)
        async with manager.use(root, budget.left_s()) as session:
            self.lean_users.add(ctx.owner)
            if source is not None and path is not None and session.known_source(path) is None:
                session.remember_source(path, source)  # the operation's read checks it again
            return await operation(session, budget.spent_from(args), ctx)

    async def drop(self, root: str, *, owner: str = "", others: int = 0) -> DropResult:
        """Stops the workspace's session; while ``others`` other agents share it (a shared
        host), only the caller's handles and scratch documents go, and the answer says so."""
        if others > 0:
            handles = await self.release_owner(owner, "workspaceDropped")
            return {
                "workspace": {"root": root},
                "dropped": False,
                "invalidated_handles": handles,
                "reason": "inUseByOtherAgents",
                "other_agents": others,
            }
        dropped, handles = await self._manager().drop(root)
        result: DropResult = {
            "workspace": {"root": root},
            "dropped": dropped,
            "invalidated_handles": handles,
        }
        if not dropped:
            result["reason"] = "notFound"
        return result

    async def release_owner(self, owner: str, reason: str) -> int:
        """Retires ``owner``'s handles and closes its scratch documents; how many handles."""
        if self._speculation is None:
            return 0
        return await self._speculation.release_owner(owner, reason)

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


_NEGLIGIBLE_MS = 50  # time spent before the operation that is not taken off its wait


class _Budget:
    """A call's ``wait_ms``, which bounds the whole call: what reading the file and starting
    the session took is taken from what the operation may wait."""

    def __init__(self, wait_ms: int | None) -> None:
        self.wait_ms = wait_ms
        self.began = time.monotonic()

    def left_s(self) -> float | None:
        if self.wait_ms is None:
            return None
        return max(0.0, self.wait_ms / 1000 - (time.monotonic() - self.began))

    def spent_from(self, args: A) -> A:
        """``args`` with ``wait_ms`` lowered to what is left of it."""
        left = self.left_s()
        if left is None or self.wait_ms is None:
            return args
        remaining = min(self.wait_ms, int(left * 1000))
        if self.wait_ms - remaining < _NEGLIGIBLE_MS:  # a read and a lookup: keep the caller's
            return args  # own figure, which a timeout then reports as the whole call's wait
        if hasattr(args, "model_copy"):
            return args.model_copy(update={"wait_ms": remaining})  # type: ignore[no-any-return]
        if dataclasses.is_dataclass(args) and not isinstance(args, type):
            return dataclasses.replace(args, wait_ms=remaining)  # type: ignore[return-value]
        return args


def _alive(manager: SessionManager, root: str) -> bool:
    session = manager.cached(root)
    return session is not None and session.alive
