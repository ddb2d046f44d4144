"""The broker as the MCP server's Lean backend (``beam_mcp.backend.LeanBackend``).

``create_backend(settings)`` is looked up by ``beam_mcp.backend``. Tool errors raised inside the
broker are ``BrokerError``s, a kind of ``beam_mcp.errors.ToolError``, reported as they stand.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from beam_runtime.broker import operations, queries
from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.manager import ManagerConfig, SessionManager
from beam_runtime.broker.paths import read_source, resolve_source
from beam_runtime.broker.scratch import PoolConfig
from beam_runtime.broker.session import Limits
from beam_runtime.broker.speculation import Speculation

if TYPE_CHECKING:
    from beam_mcp.backend import ToolContext
    from beam_mcp.settings import Settings


SPECULATIVE = frozenset(
    ("lean_run_at", "lean_run_at_handle", "lean_run_with", "lean_run_with_linear", "lean_release")
)


def pool_config(settings: Settings) -> PoolConfig:
    return PoolConfig(
        per_document=settings.scratch_per_document,
        per_process=settings.scratch_per_process,
        idle_s=settings.scratch_idle_ms / 1000,
        wait_s=settings.barrier_timeout_ms / 1000,
    )


def config_from(settings: Settings) -> ManagerConfig:
    limits = Limits(
        start_s=settings.session_start_timeout_ms / 1000,
        barrier_s=settings.barrier_timeout_ms / 1000,
        navigation_s=settings.navigation_timeout_ms / 1000,
        rpc_keepalive_s=settings.rpc_keepalive_ms / 1000,
        barrier_reissue_s=settings.barrier_reissue_ms / 1000,
    )
    return ManagerConfig(
        lean_cmd=settings.lean_cmd,
        beam_cli=settings.beam_cli,
        limits=limits,
        idle_timeout_s=settings.idle_timeout_ms / 1000,
        max_workspaces=settings.max_workspaces,
        config_timeout_s=min(120.0, settings.session_start_timeout_ms / 1000),
    )


class BrokerBackend:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.manager: SessionManager | None = None
        self._group: TaskGroup | None = None
        self.speculation = Speculation(pool_config(settings))

    def attach(self, group: TaskGroup) -> None:
        """The server's long-lived task group: session readers and the idle reaper run there."""
        from beam_runtime.lsp.client import LspClient

        self._group = group
        self.manager = SessionManager(config_from(self.settings), partial(LspClient.open_in, group))
        self.manager.session_observers.append(self.speculation.adopt)
        group.start_soon(self.manager.reap_idle)
        group.start_soon(self.speculation.scratch.reap_idle)

    def _manager(self) -> SessionManager:
        if self.manager is None:
            raise BrokerError("internalError", "the Lean broker was not attached to the server")
        return self.manager

    async def call(self, tool: str, args: Any, ctx: ToolContext) -> dict[str, Any]:
        manager = self._manager()
        if tool == "lean_drop_workspace":
            dropped, handles = await manager.drop(ctx.root)
            result: dict[str, Any] = {
                "workspace": {"root": ctx.root},
                "dropped": dropped,
                "invalidated_handles": handles,
            }
            if not dropped:
                result["reason"] = "notFound"
            return result
        if tool == "beam_feedback_report":
            from beam_runtime.broker.feedback import feedback_report

            return feedback_report(args, ctx.root, manager, ctx)
        path = getattr(args, "path", None)
        if isinstance(path, str) and not _rereads_first(tool, manager, ctx.root):
            read_source(resolve_source(ctx.root, path))  # fail before Lean starts or changes
        async with manager.use(ctx.root) as session:
            if tool in SPECULATIVE:
                return await self.speculation.call(session, tool, args, ctx)
            return await _run(session, tool, args, ctx)

    def runtime_active(self) -> bool:
        return self.manager is not None and self.manager.ever_started

    def workspace_sessions(self) -> dict[str, dict[str, Any]]:
        return {} if self.manager is None else self.manager.describe()

    async def aclose(self) -> None:
        if self.manager is not None:
            with anyio.CancelScope(shield=True):
                await self.manager.aclose()


# Tools that resolve and re-read their file before sending Lean anything: with a live session
# their own read reports a bad path, so checking it up front would only read the file twice.
READ_BEFORE_LEAN = frozenset(
    (
        *queries.POSITION_METHODS,
        "lean_update",
        "lean_sync",
        "lean_document_symbols",
        "lean_goals",
        "lean_todo",
        "lean_code_action_resolve",
    )
)


def _rereads_first(tool: str, manager: SessionManager, root: str) -> bool:
    session = manager.cached(root)
    return tool in READ_BEFORE_LEAN and session is not None and session.alive


async def _run(session: Any, tool: str, args: Any, ctx: ToolContext) -> dict[str, Any]:
    if tool in queries.POSITION_METHODS:
        return await queries.position_tool(session, tool, args, ctx)
    if tool == "lean_update":
        return await operations.update(session, args.path, ctx)
    if tool in ("lean_sync", "lean_refresh"):
        return await operations.sync(
            session,
            args.path,
            ctx,
            scope=args.diagnostic_scope,
            items=args.diagnostics_in_result,
            refresh=tool == "lean_refresh",
        )
    if tool in ("lean_save", "lean_close_save"):
        return await operations.save(
            session,
            args.path,
            ctx,
            scope=args.diagnostic_scope,
            close_after=tool == "lean_close_save",
        )
    if tool == "lean_close":
        return await operations.close(session, args.path)
    simple = {
        "lean_document_symbols": queries.document_symbols,
        "lean_workspace_symbols": queries.workspace_symbols,
        "lean_goals": queries.goals,
        "lean_todo": queries.todo,
        "lean_code_action_resolve": queries.resolve_code_action,
    }
    if tool in simple:
        return await simple[tool](session, args, ctx)
    raise BrokerError("internalError", f"{tool} is not a Lean tool this broker knows")


def create_backend(settings: Settings) -> BrokerBackend:
    return BrokerBackend(settings)
