"""The tool catalog: one row per tool, the table every part of the server dispatches from.

A row names the tool, its description and annotations, its input model (a class name in
`beam_mcp.tools.models`), its handler (`beam_mcp.tools.handlers`), and how the server runs it:
`process` tools are answered by the router without a workspace; a `fence` evicts its
workspace (earlier calls drain first, later ones wait, it cannot be cancelled, and its root may
have vanished). Order is `tools/list` order.

This module must stay free of pydantic: the server serves `tools/list` from the generated
`schema.json`, and tests compare that file with what `generate.py` builds from this catalog and
the input models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from beam_mcp.tools import handlers as h

READ_ONLY: dict[str, Any] = {"readOnlyHint": True}
ADDITIVE: dict[str, Any] = {"destructiveHint": False}
IDEMPOTENT: dict[str, Any] = {"idempotentHint": True}

_PROGRESS = (
    " Pass tools/call params._meta.progressToken (a string or integer) to receive "
    "notifications/progress while the call runs; without one, a slow call sends at most one "
    "beam.status notice when the log level admits it."
)
_WORKSPACE = " Name the Lean project in workspace.root (an absolute path)."
_NO_EDITS = " Beam never edits .lean sources; the client applies edits itself."
_SPECULATIVE = (
    " The text is tried against a document snapshot and never written to disk. Any read-only "
    "hint on this tool is advice about Beam's own state, not a sandbox: Lean code and project "
    "metaprogramming may still perform IO."
)
_POSITION = " Positions are zero-based; character counts UTF-16 code units."


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    annotations: dict[str, Any] | None
    model: str  # the input model's class name in beam_mcp.tools.models
    handler: Callable[..., Any]  # process: (router) -> result; else async (broker, args, ctx)
    process: bool = False  # answered by the router: no workspace, no backend
    fence: bool = False  # evicts its workspace (see the module docstring)


def _lean(
    handler: Callable[..., Any],
    model: str,
    purpose: str,
    annotations: dict[str, Any] | None,
    extra: str = "",
) -> ToolSpec:
    text = purpose + extra + _WORKSPACE + _NO_EDITS + _PROGRESS
    return ToolSpec(handler.__name__, text, annotations, model, handler)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "beam_version",
        "Report the identity of this lean-beam MCP server: version, runtime, preferred MCP "
        "revision and whether a Lean session has started. Takes no arguments.",
        READ_ONLY,
        "NoInput",
        h.beam_version,
        process=True,
    ),
    ToolSpec(
        "beam_stats",
        "Report process statistics for debugging: uptime, per-tool call counts and latencies, "
        "and the Lean workspaces currently cached. Do not use it to choose a workspace.",
        READ_ONLY,
        "NoInput",
        h.beam_stats,
        process=True,
    ),
    ToolSpec(
        "beam_feedback_report",
        "Draft a feedback report about lean-beam for the user to review. Beam never uploads or "
        "submits anything; the report is returned to you and, when bundle is dir or zip, also "
        "written as local evidence files. confidential: true leaves out project context."
        + _WORKSPACE
        + _PROGRESS,
        None,
        "FeedbackInput",
        h.beam_feedback_report,
    ),
    ToolSpec(
        "lean_drop_workspace",
        "Evict the cached Lean runtime of one workspace and invalidate its proof handles. Use it "
        "after changing lakefile, manifest, toolchain or Lean options. Repeating it answers "
        "dropped: false with reason notFound; a vanished root is accepted."
        + _WORKSPACE
        + _PROGRESS,
        IDEMPOTENT,
        "WorkspaceOnly",
        h.lean_drop_workspace,
        fence=True,
    ),
    _lean(
        h.lean_run_at,
        "RunAtInput",
        "Speculatively run a command or tactic block at a position of a "
        "document version and report messages, traces and the proof state; returns no "
        "follow-up handle.",
        READ_ONLY,
        _SPECULATIVE + _POSITION,
    ),
    _lean(
        h.lean_run_at_handle,
        "RunAtInput",
        "Speculatively run text at a position like lean_run_at, "
        "and return a next_handle for continuing from the resulting state when there is one.",
        ADDITIVE,
        _SPECULATIVE + _POSITION,
    ),
    _lean(
        h.lean_hover,
        "PositionInput",
        "Hover information (type and docs) at a position of a document version.",
        READ_ONLY,
        _POSITION,
    ),
    _lean(
        h.lean_signature_help,
        "PositionInput",
        "Signature help at a position of a document version.",
        READ_ONLY,
        _POSITION,
    ),
    _lean(
        h.lean_definition,
        "PositionInput",
        "Locations of the definition of the name at a position.",
        READ_ONLY,
        _POSITION,
    ),
    _lean(
        h.lean_references,
        "ReferencesInput",
        "Locations that reference the name at a position; include_declaration defaults to true.",
        READ_ONLY,
        _POSITION,
    ),
    _lean(
        h.lean_document_symbols,
        "DocumentInput",
        "Symbols declared in a document version.",
        READ_ONLY,
    ),
    _lean(
        h.lean_workspace_symbols,
        "WorkspaceSymbolsInput",
        "Search the symbols of the whole workspace by query.",
        READ_ONLY,
    ),
    _lean(
        h.lean_goals,
        "GoalsInput",
        "Tactic goals before or after the tactic at a position (mode before "
        "or after); an empty list means the goal is solved.",
        READ_ONLY,
        _POSITION,
    ),
    _lean(
        h.lean_todo,
        "TodoInput",
        "List work left in a range of a document version (sorry, holes, "
        "diagnostics, code actions, incomplete proofs) with positions to try lean_run_at.",
        READ_ONLY,
        _POSITION,
    ),
    _lean(
        h.lean_code_action_resolve,
        "CodeActionResolveInput",
        "Resolve a code action returned by lean_todo; the "
        "client applies any workspace edit it contains.",
        READ_ONLY,
    ),
    _lean(
        h.lean_run_with,
        "RunWithInput",
        "Speculatively continue from a proof handle with more text, keeping "
        "the parent handle and returning a fresh next_handle on success.",
        ADDITIVE,
        _SPECULATIVE,
    ),
    _lean(
        h.lean_run_with_linear,
        "RunWithInput",
        "Speculatively continue from a proof handle with more text "
        "and consume the parent handle, whether or not the text succeeds.",
        None,
        _SPECULATIVE,
    ),
    _lean(h.lean_release, "HandleInput", "Release a proof handle that is no longer needed.", None),
    _lean(
        h.lean_update,
        "PathInput",
        "Read the file from disk into Beam's document mirror and return its "
        "version and whether it changed, without waiting for diagnostics.",
        None,
    ),
    _lean(
        h.lean_sync,
        "SyncInput",
        "Read the file from disk, wait until Lean has checked it and return "
        "the version, diagnostic counts, save readiness and document progress.",
        None,
    ),
    _lean(
        h.lean_refresh,
        "SyncInput",
        "Close and reopen the document, re-read it from disk and wait for "
        "fresh diagnostics; the version keeps counting up.",
        None,
    ),
    _lean(
        h.lean_save,
        "SaveInput",
        "Sync the file and write its Lake build artifacts as a development "
        "checkpoint (not a substitute for lake build in CI).",
        None,
    ),
    _lean(
        h.lean_close_save,
        "SaveInput",
        "Save the file like lean_save, then close the document.",
        None,
    ),
    _lean(
        h.lean_close,
        "PathInput",
        "Close the tracked document; succeeds when it is already closed.",
        IDEMPOTENT,
    ),
    _lean(
        h.lean_verify,
        "VerifyInput",
        "Verify files with Lake's batch build (never the editor's view): builds each file's "
        "module and every workspace module importing it, then lists each declaration's axioms "
        "and flags sorryAx, nonstandard axioms, unsafe, implemented_by, extern and "
        "skipKernelTC. ok is true only if all of that is clean. Returns a receipt; pass it back "
        "to learn whether it still holds (receipt_valid, stale) without rebuilding.",
        None,
    ),
    _lean(
        h.lean_search,
        "SearchInput",
        "Search declarations of the workspace, .lake/packages and the toolchain sources by "
        "name fragments or words of the statement; each hit has name, kind, signature as "
        "written, path and 1-based line. Search before guessing a lemma name.",
        READ_ONLY,
    ),
    _lean(
        h.lean_try,
        "TryInput",
        "Try every tactic at every position (inside proofs) in one call, in parallel on "
        "scratch documents: per pair success, goals_after (count), first_goal (target), the "
        "first error and a handle for lean_run_with on success; same_as names an earlier "
        "result at the same position with the same outcome. stop_on_first_success skips a "
        "position's remaining tactics once one works; suggest adds exact?, apply?, simp? and "
        "aesop? and returns their Try this texts.",
        ADDITIVE,
        _SPECULATIVE + _POSITION,
    ),
)

NAMES: tuple[str, ...] = tuple(t.name for t in TOOLS)
BY_NAME: dict[str, ToolSpec] = {t.name: t for t in TOOLS}
