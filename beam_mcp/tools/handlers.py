"""What each tool does once its input is valid: one handler per catalog row.

A process handler answers from the router (`beam_version`, `beam_stats`); a workspace handler
runs one broker operation and returns its result, whose declared type (a TypedDict of
`beam_runtime.broker.results`) is the tool's result shape of record; the shape tests check real
answers against it. Broker modules are imported inside the handlers, so the catalog that names
them stays cheap to import (`tools/list` at start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from beam_mcp.backend import ToolContext
    from beam_mcp.tools import models as m
    from beam_runtime.broker import results as r
    from beam_runtime.broker.service import Broker
    from beam_runtime.broker.session.reporting import Context
    from beam_runtime.broker.session.session import LeanSession

    class ProcessHost:  # what process handlers read: the router
        def identity(self) -> dict[str, Any]: ...
        def stats_json(self) -> dict[str, Any]: ...


Result = dict[str, Any]


# ---------------------------------------------------------------------- process-wide


def beam_version(host: ProcessHost) -> Result:
    return host.identity()


def beam_stats(host: ProcessHost) -> Result:
    return host.stats_json()


# ---------------------------------------------------------------------- workspace


async def beam_feedback_report(
    broker: Broker, args: m.FeedbackInput, ctx: ToolContext
) -> r.FeedbackResult:
    return await broker.feedback(args, ctx.root, ctx)


async def lean_drop_workspace(
    broker: Broker, args: m.WorkspaceOnly, ctx: ToolContext
) -> r.DropResult:
    return await broker.drop(ctx.root)


# ---------------------------------------------------------------------- documents


async def lean_update(broker: Broker, args: m.PathInput, ctx: ToolContext) -> r.UpdateResult:
    from beam_runtime.broker import operations

    async def update(session: LeanSession, a: m.PathInput, c: Context) -> Result:
        return await operations.update(session, a.path, c)

    return await broker.run(ctx.root, args.path, update, args, ctx, rereads=True)


async def lean_sync(broker: Broker, args: m.SyncInput, ctx: ToolContext) -> r.SyncResult:
    return await _sync(broker, args, ctx, refresh=False, rereads=True)


async def lean_refresh(broker: Broker, args: m.SyncInput, ctx: ToolContext) -> r.SyncResult:
    return await _sync(broker, args, ctx, refresh=True, rereads=False)


async def _sync(
    broker: Broker, args: m.SyncInput, ctx: ToolContext, *, refresh: bool, rereads: bool
) -> Any:
    from beam_runtime.broker import operations

    async def sync(session: LeanSession, a: m.SyncInput, c: Context) -> Result:
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


async def lean_save(broker: Broker, args: m.SaveInput, ctx: ToolContext) -> r.SaveResult:
    return await _save(broker, args, ctx, close_after=False)


async def lean_close_save(broker: Broker, args: m.SaveInput, ctx: ToolContext) -> r.CloseSaveResult:
    return await _save(broker, args, ctx, close_after=True)


async def _save(broker: Broker, args: m.SaveInput, ctx: ToolContext, *, close_after: bool) -> Any:
    from beam_runtime.broker import operations

    async def save(session: LeanSession, a: m.SaveInput, c: Context) -> Result:
        return await operations.save(
            session,
            a.path,
            c,
            scope=a.diagnostic_scope,
            close_after=close_after,
            wait_ms=a.wait_ms,
        )

    return await broker.run(ctx.root, args.path, save, args, ctx)


async def lean_close(broker: Broker, args: m.PathInput, ctx: ToolContext) -> r.CloseResult:
    from beam_runtime.broker import operations

    async def close(session: LeanSession, a: m.PathInput, c: Context) -> Result:
        return await operations.close(session, a.path)

    return await broker.run(ctx.root, args.path, close, args, ctx)


# ---------------------------------------------------------------------- queries


async def lean_hover(broker: Broker, args: m.PositionInput, ctx: ToolContext) -> r.LeanAnswer:
    from beam_runtime.broker.queries.queries import hover

    return await broker.run(ctx.root, args.path, hover, args, ctx, rereads=True)


async def lean_signature_help(
    broker: Broker, args: m.PositionInput, ctx: ToolContext
) -> r.LeanAnswer:
    from beam_runtime.broker.queries.queries import signature_help

    return await broker.run(ctx.root, args.path, signature_help, args, ctx, rereads=True)


async def lean_definition(broker: Broker, args: m.PositionInput, ctx: ToolContext) -> r.ListResult:
    from beam_runtime.broker.queries.queries import definition

    return await broker.run(ctx.root, args.path, definition, args, ctx, rereads=True)


async def lean_references(
    broker: Broker, args: m.ReferencesInput, ctx: ToolContext
) -> r.ListResult:
    from beam_runtime.broker.queries.queries import references

    return await broker.run(ctx.root, args.path, references, args, ctx, rereads=True)


async def lean_document_symbols(
    broker: Broker, args: m.DocumentInput, ctx: ToolContext
) -> r.ListResult:
    from beam_runtime.broker.queries.queries import document_symbols

    return await broker.run(ctx.root, args.path, document_symbols, args, ctx, rereads=True)


async def lean_workspace_symbols(
    broker: Broker, args: m.WorkspaceSymbolsInput, ctx: ToolContext
) -> r.ListResult:
    from beam_runtime.broker.queries.queries import workspace_symbols

    return await broker.run(ctx.root, None, workspace_symbols, args, ctx)


async def lean_goals(broker: Broker, args: m.GoalsInput, ctx: ToolContext) -> r.GoalsResult:
    from beam_runtime.broker.queries.queries import goals

    return await broker.run(ctx.root, args.path, goals, args, ctx, rereads=True)


async def lean_todo(broker: Broker, args: m.TodoInput, ctx: ToolContext) -> r.TodoResult:
    from beam_runtime.broker.queries.queries import todo

    return await broker.run(ctx.root, args.path, todo, args, ctx, rereads=True)


async def lean_code_action_resolve(
    broker: Broker, args: m.CodeActionResolveInput, ctx: ToolContext
) -> r.CodeActionResult:
    from beam_runtime.broker.queries.queries import resolve_code_action

    return await broker.run(ctx.root, args.path, resolve_code_action, args, ctx, rereads=True)


# ---------------------------------------------------------------------- speculation


async def lean_run_at(broker: Broker, args: m.RunAtInput, ctx: ToolContext) -> r.RunResult:
    return await _run_at(broker, args, ctx, keep=False)


async def lean_run_at_handle(broker: Broker, args: m.RunAtInput, ctx: ToolContext) -> r.RunResult:
    return await _run_at(broker, args, ctx, keep=True)


async def _run_at(broker: Broker, args: m.RunAtInput, ctx: ToolContext, *, keep: bool) -> Any:
    async def run_at(session: LeanSession, a: m.RunAtInput, c: Context) -> Result:
        return await broker.speculation.run_at(session, a, c, keep=keep)

    return await broker.run(ctx.root, args.path, run_at, args, ctx)


async def lean_run_with(broker: Broker, args: m.RunWithInput, ctx: ToolContext) -> r.RunResult:
    return await _run_with(broker, args, ctx, linear=False)


async def lean_run_with_linear(
    broker: Broker, args: m.RunWithInput, ctx: ToolContext
) -> r.RunResult:
    return await _run_with(broker, args, ctx, linear=True)


async def _run_with(broker: Broker, args: m.RunWithInput, ctx: ToolContext, *, linear: bool) -> Any:
    async def run_with(session: LeanSession, a: m.RunWithInput, c: Context) -> Result:
        return await broker.speculation.run_with(session, a, c, linear=linear)

    return await broker.run(ctx.root, args.path, run_with, args, ctx)


async def lean_release(broker: Broker, args: m.HandleInput, ctx: ToolContext) -> r.ReleaseResult:
    return await broker.run(ctx.root, args.path, broker.speculation.release, args, ctx)


# ------------------------------------------------------------ verification, search, trying


async def lean_verify(broker: Broker, args: m.VerifyInput, ctx: ToolContext) -> r.VerifyResult:
    from beam_runtime.broker.results import VerifyResult, shaped
    from beam_runtime.broker.verify import verify

    plan = await verify.prepare(ctx.root, args)
    if plan.check is not None and plan.check.valid:  # nothing changed: no session, no build
        return shaped(VerifyResult, verify.from_receipt(plan))

    async def run(session: LeanSession, a: m.VerifyInput, c: Context) -> Result:
        return await verify.verify(session, broker.speculation.scratch, plan, c)

    return await broker.run(ctx.root, plan.files[0].display, run, args, ctx)


async def lean_search(broker: Broker, args: m.SearchInput, ctx: ToolContext) -> r.SearchResult:
    from beam_runtime.broker.results import SearchResult, shaped

    searches = broker.searches()
    found = await searches.search(ctx.root, args.query, args.kind, args.limit, args.wait_ms, ctx)
    return shaped(SearchResult, found)


async def lean_try(broker: Broker, args: m.TryInput, ctx: ToolContext) -> r.TryResult:
    from beam_runtime.broker.speculation.trying import run_try

    async def run(session: LeanSession, a: m.TryInput, c: Context) -> Result:
        return await run_try(broker.speculation, session, a, c)

    return await broker.run(ctx.root, args.path, run, args, ctx)
