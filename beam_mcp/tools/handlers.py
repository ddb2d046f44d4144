"""What each tool does once its input is valid: one handler per catalog row.

A process handler answers from the router (`beam_version`, `beam_stats`). A workspace handler
hands its input model to the tool's entry point in `beam_runtime.broker.entries`, the service
table that a shared Lean host runs too; its declared types are the check that the model
satisfies the broker's argument protocols and that its result shape (a TypedDict of
`beam_runtime.broker.results`) is the tool's shape of record. The entries import the broker
lazily and each handler imports them when it first runs, so the catalog that names these
handlers stays cheap to import (`tools/list` at start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from beam_mcp.backend import ToolContext
    from beam_mcp.tools import models as m
    from beam_runtime.broker import results as r
    from beam_runtime.broker.service import Broker

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
    from beam_runtime.broker import entries as e

    return await e.beam_feedback_report(broker, args, ctx)


async def lean_drop_workspace(
    broker: Broker, args: m.WorkspaceOnly, ctx: ToolContext
) -> r.DropResult:
    from beam_runtime.broker import entries as e

    return await e.lean_drop_workspace(broker, args, ctx)


async def lean_update(broker: Broker, args: m.PathInput, ctx: ToolContext) -> r.UpdateResult:
    from beam_runtime.broker import entries as e

    return await e.lean_update(broker, args, ctx)


async def lean_sync(broker: Broker, args: m.SyncInput, ctx: ToolContext) -> r.SyncResult:
    from beam_runtime.broker import entries as e

    return await e.lean_sync(broker, args, ctx)


async def lean_refresh(broker: Broker, args: m.SyncInput, ctx: ToolContext) -> r.SyncResult:
    from beam_runtime.broker import entries as e

    return await e.lean_refresh(broker, args, ctx)


async def lean_save(broker: Broker, args: m.SaveInput, ctx: ToolContext) -> r.SaveResult:
    from beam_runtime.broker import entries as e

    return await e.lean_save(broker, args, ctx)


async def lean_close_save(broker: Broker, args: m.SaveInput, ctx: ToolContext) -> r.CloseSaveResult:
    from beam_runtime.broker import entries as e

    return await e.lean_close_save(broker, args, ctx)


async def lean_close(broker: Broker, args: m.PathInput, ctx: ToolContext) -> r.CloseResult:
    from beam_runtime.broker import entries as e

    return await e.lean_close(broker, args, ctx)


async def lean_hover(broker: Broker, args: m.PositionInput, ctx: ToolContext) -> r.LeanAnswer:
    from beam_runtime.broker import entries as e

    return await e.lean_hover(broker, args, ctx)


async def lean_signature_help(
    broker: Broker, args: m.PositionInput, ctx: ToolContext
) -> r.LeanAnswer:
    from beam_runtime.broker import entries as e

    return await e.lean_signature_help(broker, args, ctx)


async def lean_definition(broker: Broker, args: m.PositionInput, ctx: ToolContext) -> r.ListResult:
    from beam_runtime.broker import entries as e

    return await e.lean_definition(broker, args, ctx)


async def lean_references(
    broker: Broker, args: m.ReferencesInput, ctx: ToolContext
) -> r.ListResult:
    from beam_runtime.broker import entries as e

    return await e.lean_references(broker, args, ctx)


async def lean_document_symbols(
    broker: Broker, args: m.DocumentInput, ctx: ToolContext
) -> r.ListResult:
    from beam_runtime.broker import entries as e

    return await e.lean_document_symbols(broker, args, ctx)


async def lean_workspace_symbols(
    broker: Broker, args: m.WorkspaceSymbolsInput, ctx: ToolContext
) -> r.ListResult:
    from beam_runtime.broker import entries as e

    return await e.lean_workspace_symbols(broker, args, ctx)


async def lean_goals(broker: Broker, args: m.GoalsInput, ctx: ToolContext) -> r.GoalsResult:
    from beam_runtime.broker import entries as e

    return await e.lean_goals(broker, args, ctx)


async def lean_todo(broker: Broker, args: m.TodoInput, ctx: ToolContext) -> r.TodoResult:
    from beam_runtime.broker import entries as e

    return await e.lean_todo(broker, args, ctx)


async def lean_code_action_resolve(
    broker: Broker, args: m.CodeActionResolveInput, ctx: ToolContext
) -> r.CodeActionResult:
    from beam_runtime.broker import entries as e

    return await e.lean_code_action_resolve(broker, args, ctx)


async def lean_run_at(broker: Broker, args: m.RunAtInput, ctx: ToolContext) -> r.RunResult:
    from beam_runtime.broker import entries as e

    return await e.lean_run_at(broker, args, ctx)


async def lean_run_at_handle(broker: Broker, args: m.RunAtInput, ctx: ToolContext) -> r.RunResult:
    from beam_runtime.broker import entries as e

    return await e.lean_run_at_handle(broker, args, ctx)


async def lean_run_with(broker: Broker, args: m.RunWithInput, ctx: ToolContext) -> r.RunResult:
    from beam_runtime.broker import entries as e

    return await e.lean_run_with(broker, args, ctx)


async def lean_run_with_linear(
    broker: Broker, args: m.RunWithInput, ctx: ToolContext
) -> r.RunResult:
    from beam_runtime.broker import entries as e

    return await e.lean_run_with_linear(broker, args, ctx)


async def lean_release(broker: Broker, args: m.HandleInput, ctx: ToolContext) -> r.ReleaseResult:
    from beam_runtime.broker import entries as e

    return await e.lean_release(broker, args, ctx)


async def lean_verify(broker: Broker, args: m.VerifyInput, ctx: ToolContext) -> r.VerifyResult:
    from beam_runtime.broker import entries as e

    return await e.lean_verify(broker, args, ctx)


async def lean_search(broker: Broker, args: m.SearchInput, ctx: ToolContext) -> r.SearchResult:
    from beam_runtime.broker import entries as e

    return await e.lean_search(broker, args, ctx)


async def lean_try(broker: Broker, args: m.TryInput, ctx: ToolContext) -> r.TryResult:
    from beam_runtime.broker import entries as e

    return await e.lean_try(broker, args, ctx)
