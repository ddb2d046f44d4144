"""The service boundary: one entry point per workspace tool, taking its arguments as plain data.

``ENTRIES`` maps a workspace tool's name to ``entry(broker, args, ctx)``. The MCP server's
handlers call these in-process, and a shared Lean host (``beam_runtime/host``) calls the same
ones for its connections, so both give the same answers. ``args`` is read through the protocols
of ``arguments.py``: the MCP layer's input models, or ``Fields`` rebuilt from JSON on a host.
Broker modules are imported inside the entries, so importing this table stays cheap.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # importing this table must not load anyio (tools/list at start-up)
    from beam_runtime.broker import arguments as a
    from beam_runtime.broker import results as r
    from beam_runtime.broker.service import Broker
    from beam_runtime.broker.session.reporting import Context
    from beam_runtime.broker.session.session import LeanSession

    class CallContext(Context, Protocol):
        """What an entry reads besides the arguments: the canonical root and who else uses
        the workspace."""

        @property
        def root(self) -> str: ...

        def others(self) -> int:
            """How many other agents use this workspace now (always 0 in-process)."""
            ...


Result = dict[str, Any]


class Fields(dict[str, Any]):
    """Tool arguments rebuilt from JSON: a dict whose keys also read as attributes.

    Nested objects become ``Fields`` too, so ``args.handle.id`` and ``args.positions[0].line``
    read as on the input models, while a field that is a plain object in the schema
    (``code_action``, ``receipt``) still behaves as the mapping it is.
    """

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    @classmethod
    def of(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return cls({key: cls.of(item) for key, item in value.items()})
        if isinstance(value, list):
            return [cls.of(item) for item in value]
        return value


# ---------------------------------------------------------------------- workspace


async def beam_feedback_report(
    broker: Broker, args: a.FeedbackArgs, ctx: CallContext
) -> r.FeedbackResult:
    return await broker.feedback(args, ctx.root, ctx)


async def lean_drop_workspace(broker: Broker, args: Any, ctx: CallContext) -> r.DropResult:
    return await broker.drop(ctx.root, owner=ctx.owner, others=ctx.others())


# ---------------------------------------------------------------------- documents


async def lean_update(broker: Broker, args: a.PathArgs, ctx: CallContext) -> r.UpdateResult:
    from beam_runtime.broker import operations

    async def update(session: LeanSession, a: a.PathArgs, c: Context) -> Result:
        return await operations.update(session, a.path, c)

    return await broker.run(ctx.root, args.path, update, args, ctx, rereads=True)


async def lean_sync(broker: Broker, args: a.SyncArgs, ctx: CallContext) -> r.SyncResult:
    return await _sync(broker, args, ctx, refresh=False, rereads=True)


async def lean_refresh(broker: Broker, args: a.SyncArgs, ctx: CallContext) -> r.SyncResult:
    return await _sync(broker, args, ctx, refresh=True, rereads=False)


async def _sync(
    broker: Broker, args: a.SyncArgs, ctx: CallContext, *, refresh: bool, rereads: bool
) -> Any:
    from beam_runtime.broker import operations

    async def sync(session: LeanSession, a: a.SyncArgs, c: Context) -> Result:
        return await operations.sync(
            session,
            a.path,
            c,
            scope=a.diagnostic_scope,
            items=a.diagnostics_in_result,
            refresh=refresh,
            wait_ms=a.wait_ms,
        )

    return await broker.run(ctx.root, args.path, sync, args, ctx, rereads=rereads)


async def lean_save(broker: Broker, args: a.SaveArgs, ctx: CallContext) -> r.SaveResult:
    return await _save(broker, args, ctx, close_after=False)


async def lean_close_save(broker: Broker, args: a.SaveArgs, ctx: CallContext) -> r.CloseSaveResult:
    return await _save(broker, args, ctx, close_after=True)


async def _save(broker: Broker, args: a.SaveArgs, ctx: CallContext, *, close_after: bool) -> Any:
    from beam_runtime.broker import operations

    async def save(session: LeanSession, a: a.SaveArgs, c: Context) -> Result:
        return await operations.save(
            session,
            a.path,
            c,
            scope=a.diagnostic_scope,
            close_after=close_after,
            wait_ms=a.wait_ms,
        )

    return await broker.run(ctx.root, args.path, save, args, ctx)


async def lean_close(broker: Broker, args: a.PathArgs, ctx: CallContext) -> r.CloseResult:
    from beam_runtime.broker import operations

    async def close(session: LeanSession, a: a.PathArgs, c: Context) -> Result:
        return await operations.close(session, a.path)

    return await broker.run(ctx.root, args.path, close, args, ctx)


# ---------------------------------------------------------------------- queries


async def lean_hover(broker: Broker, args: a.PositionArgs, ctx: CallContext) -> r.LeanAnswer:
    from beam_runtime.broker.queries.queries import hover

    return await broker.run(ctx.root, args.path, hover, args, ctx, rereads=True)


async def lean_signature_help(
    broker: Broker, args: a.PositionArgs, ctx: CallContext
) -> r.LeanAnswer:
    from beam_runtime.broker.queries.queries import signature_help

    return await broker.run(ctx.root, args.path, signature_help, args, ctx, rereads=True)


async def lean_definition(broker: Broker, args: a.PositionArgs, ctx: CallContext) -> r.ListResult:
    from beam_runtime.broker.queries.queries import definition

    return await broker.run(ctx.root, args.path, definition, args, ctx, rereads=True)


async def lean_references(broker: Broker, args: a.ReferencesArgs, ctx: CallContext) -> r.ListResult:
    from beam_runtime.broker.queries.queries import references

    return await broker.run(ctx.root, args.path, references, args, ctx, rereads=True)


async def lean_document_symbols(
    broker: Broker, args: a.DocumentArgs, ctx: CallContext
) -> r.ListResult:
    from beam_runtime.broker.queries.queries import document_symbols

    return await broker.run(ctx.root, args.path, document_symbols, args, ctx, rereads=True)


async def lean_workspace_symbols(
    broker: Broker, args: a.WorkspaceSymbolsArgs, ctx: CallContext
) -> r.ListResult:
    from beam_runtime.broker.queries.queries import workspace_symbols

    return await broker.run(ctx.root, None, workspace_symbols, args, ctx)


async def lean_goals(broker: Broker, args: a.GoalsArgs, ctx: CallContext) -> r.GoalsResult:
    from beam_runtime.broker.queries.queries import goals

    return await broker.run(ctx.root, args.path, goals, args, ctx, rereads=True)


async def lean_todo(broker: Broker, args: a.TodoArgs, ctx: CallContext) -> r.TodoResult:
    from beam_runtime.broker.queries.queries import todo

    return await broker.run(ctx.root, args.path, todo, args, ctx, rereads=True)


async def lean_code_action_resolve(
    broker: Broker, args: a.CodeActionArgs, ctx: CallContext
) -> r.CodeActionResult:
    from beam_runtime.broker.queries.queries import resolve_code_action

    return await broker.run(ctx.root, args.path, resolve_code_action, args, ctx, rereads=True)


# ---------------------------------------------------------------------- speculation


async def lean_run_at(broker: Broker, args: a.RunAtArgs, ctx: CallContext) -> r.RunResult:
    return await _run_at(broker, args, ctx, keep=False)


async def lean_run_at_handle(broker: Broker, args: a.RunAtArgs, ctx: CallContext) -> r.RunResult:
    return await _run_at(broker, args, ctx, keep=True)


async def _run_at(broker: Broker, args: a.RunAtArgs, ctx: CallContext, *, keep: bool) -> Any:
    async def run_at(session: LeanSession, a: a.RunAtArgs, c: Context) -> Result:
        return await broker.speculation.run_at(session, a, c, keep=keep)

    return await broker.run(ctx.root, args.path, run_at, args, ctx)


async def lean_run_with(broker: Broker, args: a.RunWithArgs, ctx: CallContext) -> r.RunResult:
    return await _run_with(broker, args, ctx, linear=False)


async def lean_run_with_linear(
    broker: Broker, args: a.RunWithArgs, ctx: CallContext
) -> r.RunResult:
    return await _run_with(broker, args, ctx, linear=True)


async def _run_with(broker: Broker, args: a.RunWithArgs, ctx: CallContext, *, linear: bool) -> Any:
    async def run_with(session: LeanSession, a: a.RunWithArgs, c: Context) -> Result:
        return await broker.speculation.run_with(session, a, c, linear=linear)

    return await broker.run(ctx.root, args.path, run_with, args, ctx)


async def lean_release(broker: Broker, args: a.HandleArgs, ctx: CallContext) -> r.ReleaseResult:
    return await broker.run(ctx.root, args.path, broker.speculation.release, args, ctx)


# ------------------------------------------------------------ verification, search, trying


async def lean_verify(broker: Broker, args: a.VerifyArgs, ctx: CallContext) -> r.VerifyResult:
    from beam_runtime.broker.results import VerifyResult, shaped
    from beam_runtime.broker.verify import verify

    plan = await verify.prepare(ctx.root, args)
    if plan.check is not None and plan.check.valid:  # nothing changed: no session, no build
        return shaped(VerifyResult, verify.from_receipt(plan))

    async def run(session: LeanSession, a: a.VerifyArgs, c: Context) -> Result:
        return await verify.verify(session, broker.speculation.scratch, plan, c)

    return await broker.run(ctx.root, plan.files[0].display, run, args, ctx)


async def lean_search(broker: Broker, args: a.SearchArgs, ctx: CallContext) -> r.SearchResult:
    from beam_runtime.broker.results import SearchResult, shaped

    searches = broker.searches()
    found = await searches.search(ctx.root, args.query, args.kind, args.limit, args.wait_ms, ctx)
    return shaped(SearchResult, found)


async def lean_try(broker: Broker, args: a.TryArgs, ctx: CallContext) -> r.TryResult:
    from beam_runtime.broker.speculation.trying import run_try

    async def run(session: LeanSession, a: a.TryArgs, c: Context) -> Result:
        return await run_try(broker.speculation, session, a, c)

    return await broker.run(ctx.root, args.path, run, args, ctx)


Entry = Callable[[Any, Any, Any], Awaitable[Any]]

ENTRIES: dict[str, Entry] = {
    entry.__name__: entry
    for entry in (
        beam_feedback_report,
        lean_drop_workspace,
        lean_run_at,
        lean_run_at_handle,
        lean_hover,
        lean_signature_help,
        lean_definition,
        lean_references,
        lean_document_symbols,
        lean_workspace_symbols,
        lean_goals,
        lean_todo,
        lean_code_action_resolve,
        lean_run_with,
        lean_run_with_linear,
        lean_release,
        lean_update,
        lean_sync,
        lean_refresh,
        lean_save,
        lean_close_save,
        lean_close,
        lean_verify,
        lean_search,
        lean_try,
    )
}
