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

# What every Lean tool shares (workspace, progress tokens, no edits, wait_ms, positions, the
# byte budget) is said once, in the server's `instructions` (beam_mcp.router), not per tool.
_SPECULATIVE = " Runs on a scratch copy, never on disk; not a sandbox: Lean code may still do IO."
_POSITION = " Position: line+character (0-based, UTF-16), line1+match, or declaration+sorry."


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
    text = purpose + extra
    return ToolSpec(handler.__name__, text, annotations, model, handler)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "beam_version",
        "Identity of this server: version, runtime, MCP revision, whether Lean has started.",
        READ_ONLY,
        "NoInput",
        h.beam_version,
        process=True,
    ),
    ToolSpec(
        "beam_stats",
        "Debugging statistics: uptime, per-tool calls and latencies, cached workspaces.",
        READ_ONLY,
        "NoInput",
        h.beam_stats,
        process=True,
    ),
    ToolSpec(
        "beam_feedback_report",
        "Draft a lean-beam feedback report for the user to review; never uploaded. bundle "
        "dir|zip also writes local evidence files; confidential omits project context.",
        None,
        "FeedbackInput",
        h.beam_feedback_report,
    ),
    ToolSpec(
        "lean_drop_workspace",
        "Stop the workspace's Lean session and invalidate its handles (after lakefile, "
        "manifest, toolchain or option changes). Again: dropped false, reason notFound.",
        IDEMPOTENT,
        "WorkspaceOnly",
        h.lean_drop_workspace,
        fence=True,
    ),
    _lean(
        h.lean_run_at,
        "RunAtInput",
        "Try a command or tactic text at a position: success (false with reason usesSorry "
        "when it used sorry), messages, traces, proof_state.",
        READ_ONLY,
        _SPECULATIVE + _POSITION,
    ),
    _lean(
        h.lean_run_at_handle,
        "RunAtInput",
        "Like lean_run_at, and return next_handle to continue from the resulting state.",
        ADDITIVE,
        _SPECULATIVE + _POSITION,
    ),
    _lean(h.lean_hover, "PositionInput", "Hover (type, docs) at a position.", READ_ONLY, _POSITION),
    _lean(
        h.lean_signature_help,
        "PositionInput",
        "Signature help at a position.",
        READ_ONLY,
        _POSITION,
    ),
    _lean(
        h.lean_definition,
        "PositionInput",
        "Definition locations of the name at a position.",
        READ_ONLY,
        _POSITION,
    ),
    _lean(
        h.lean_references,
        "ReferencesInput",
        "Locations referencing the name at a position.",
        READ_ONLY,
        _POSITION,
    ),
    _lean(h.lean_document_symbols, "DocumentInput", "Symbols declared in a file.", READ_ONLY),
    _lean(
        h.lean_workspace_symbols,
        "WorkspaceSymbolsInput",
        "Search workspace symbols by query.",
        READ_ONLY,
    ),
    _lean(
        h.lean_goals,
        "GoalsInput",
        "Tactic goals before or after the tactic at a position; [] means solved.",
        READ_ONLY,
        _POSITION,
    ),
    _lean(
        h.lean_todo,
        "TodoInput",
        "Open work in a range (default: whole file): sorry, holes, diagnostics, code actions, "
        "incomplete proofs, each with run_at_position and run_at_text for lean_run_at.",
        READ_ONLY,
    ),
    _lean(
        h.lean_code_action_resolve,
        "CodeActionResolveInput",
        "Resolve a code_action from lean_todo; the client applies any edit itself.",
        READ_ONLY,
    ),
    _lean(
        h.lean_run_with,
        "RunWithInput",
        "Continue from a handle with more text; keeps the parent, returns next_handle.",
        ADDITIVE,
        _SPECULATIVE,
    ),
    _lean(
        h.lean_run_with_linear,
        "RunWithInput",
        "Continue from a handle with more text, consuming the parent either way.",
        None,
        _SPECULATIVE,
    ),
    _lean(h.lean_release, "HandleInput", "Release a handle.", None),
    _lean(
        h.lean_update,
        "PathInput",
        "Read the file from disk; version and whether it changed, without waiting for Lean.",
        None,
    ),
    _lean(
        h.lean_sync,
        "SyncInput",
        "Read the file, wait for Lean (up to wait_ms): version, diagnostic counts, readiness, "
        "document_progress.",
        None,
    ),
    _lean(
        h.lean_refresh,
        "SyncInput",
        "Close, reopen and sync the file (fresh diagnostics; the version still counts up).",
        None,
    ),
    _lean(
        h.lean_save,
        "SaveInput",
        "Sync, then write the file's Lake build artifacts (a checkpoint, not CI's lake build).",
        None,
    ),
    _lean(h.lean_close_save, "SaveInput", "lean_save, then close the document.", None),
    _lean(h.lean_close, "PathInput", "Close the document (fine if already closed).", IDEMPOTENT),
    _lean(
        h.lean_verify,
        "VerifyInput",
        "Verify files with Lake's batch build (never the editor's view): builds each file's "
        "module and every workspace module importing it, asks Lean for every constant the "
        "modules add and its axioms, and applies the project's policy (.lean-beam/verify.toml; "
        "strict by default: sorry, axioms beyond propext/Classical.choice/Quot.sound, native "
        "computation, implemented_by/extern, debug options, leftover search tactics) and "
        "statement lock (statements). ok is true only if all of that is clean. Returns a "
        "signed receipt; pass it back to learn whether it still holds without rebuilding.",
        None,
    ),
    _lean(
        h.lean_search,
        "SearchInput",
        "Search declarations of the workspace, .lake/packages and the toolchain sources by "
        "name fragments or words of the statement; each hit has name, kind, signature as "
        "written, path and 1-based line. Search before guessing a lemma name. While the index "
        "is being built: complete false, retry_after_ms.",
        READ_ONLY,
    ),
    _lean(
        h.lean_try,
        "TryInput",
        "Try every tactic at every position (inside proofs) in one call, in parallel on "
        "scratch documents. Per position, tactic indices grouped by outcome: succeeded (per "
        "proof state: goals_after, first_goal, a handle for lean_run_with), failed (per error, "
        "an index into errors; reason usesSorry), skipped. omitted says what was left out to "
        "fit. stop_on_first_success skips a position's remaining tactics once one works; "
        "suggest adds exact?, apply?, simp? and aesop? and returns their Try this texts.",
        ADDITIVE,
        _SPECULATIVE + _POSITION,
    ),
)

NAMES: tuple[str, ...] = tuple(t.name for t in TOOLS)
BY_NAME: dict[str, ToolSpec] = {t.name: t for t in TOOLS}
