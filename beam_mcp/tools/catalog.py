"""Names, order, descriptions and annotations of the tools, as plain data.

This module must stay free of pydantic: the server serves `tools/list` from the generated
`schema.json`, and tests compare that file with what `generate.py` builds from this catalog and
the input models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
    lean: bool  # handled by the Lean backend (workspace-bound, reports progress)


def _lean(name: str, purpose: str, annotations: dict[str, Any] | None, extra: str = "") -> ToolSpec:
    text = purpose + extra + _WORKSPACE + _NO_EDITS + _PROGRESS
    return ToolSpec(name, text, annotations, True)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "beam_version",
        "Report the identity of this lean-beam MCP server: version, runtime, preferred MCP "
        "revision and whether a Lean session has started. Takes no arguments.",
        READ_ONLY,
        False,
    ),
    ToolSpec(
        "beam_stats",
        "Report process statistics for debugging: uptime, per-tool call counts and latencies, "
        "and the Lean workspaces currently cached. Do not use it to choose a workspace.",
        READ_ONLY,
        False,
    ),
    ToolSpec(
        "beam_feedback_report",
        "Draft a feedback report about lean-beam for the user to review. Beam never uploads or "
        "submits anything; the report is returned to you and, when bundle is dir or zip, also "
        "written as local evidence files. confidential: true leaves out project context."
        + _WORKSPACE + _PROGRESS,
        None,
        False,
    ),
    ToolSpec(
        "lean_drop_workspace",
        "Evict the cached Lean runtime of one workspace and invalidate its proof handles. Use it "
        "after changing lakefile, manifest, toolchain or Lean options. Repeating it answers "
        "dropped: false with reason notFound; a vanished root is accepted."
        + _WORKSPACE + _PROGRESS,
        IDEMPOTENT,
        False,
    ),
    _lean("lean_run_at", "Speculatively run a command or tactic block at a position of a "
          "document version and report messages, traces and the proof state; returns no "
          "follow-up handle.", READ_ONLY, _SPECULATIVE + _POSITION),
    _lean("lean_run_at_handle", "Speculatively run text at a position like lean_run_at, "
          "and return a next_handle for continuing from the resulting state when there is one.",
          ADDITIVE, _SPECULATIVE + _POSITION),
    _lean("lean_hover", "Hover information (type and docs) at a position of a document "
          "version.", READ_ONLY, _POSITION),
    _lean("lean_signature_help", "Signature help at a position of a document version.",
          READ_ONLY, _POSITION),
    _lean("lean_definition", "Locations of the definition of the name at a position.",
          READ_ONLY, _POSITION),
    _lean("lean_references", "Locations that reference the name at a position; "
          "include_declaration defaults to true.", READ_ONLY, _POSITION),
    _lean("lean_document_symbols", "Symbols declared in a document version.", READ_ONLY),
    _lean("lean_workspace_symbols", "Search the symbols of the whole workspace by query.",
          READ_ONLY),
    _lean("lean_goals", "Tactic goals before or after the tactic at a position (mode before "
          "or after); an empty list means the goal is solved.", READ_ONLY, _POSITION),
    _lean("lean_todo", "List work left in a range of a document version (sorry, holes, "
          "diagnostics, code actions, incomplete proofs) with positions to try lean_run_at.",
          READ_ONLY, _POSITION),
    _lean("lean_code_action_resolve", "Resolve a code action returned by lean_todo; the "
          "client applies any workspace edit it contains.", READ_ONLY),
    _lean("lean_run_with", "Speculatively continue from a proof handle with more text, keeping "
          "the parent handle and returning a fresh next_handle on success.", ADDITIVE,
          _SPECULATIVE),
    _lean("lean_run_with_linear", "Speculatively continue from a proof handle with more text "
          "and consume the parent handle, whether or not the text succeeds.", None,
          _SPECULATIVE),
    _lean("lean_release", "Release a proof handle that is no longer needed.", None),
    _lean("lean_update", "Read the file from disk into Beam's document mirror and return its "
          "version and whether it changed, without waiting for diagnostics.", None),
    _lean("lean_sync", "Read the file from disk, wait until Lean has checked it and return "
          "the version, diagnostic counts, save readiness and document progress.", None),
    _lean("lean_refresh", "Close and reopen the document, re-read it from disk and wait for "
          "fresh diagnostics; the version keeps counting up.", None),
    _lean("lean_save", "Sync the file and write its Lake build artifacts as a development "
          "checkpoint (not a substitute for lake build in CI).", None),
    _lean("lean_close_save", "Save the file like lean_save, then close the document.", None),
    _lean("lean_close", "Close the tracked document; succeeds when it is already closed.",
          IDEMPOTENT),
)

NAMES: tuple[str, ...] = tuple(t.name for t in TOOLS)
BY_NAME: dict[str, ToolSpec] = {t.name: t for t in TOOLS}
PROCESS_TOOLS = frozenset(("beam_version", "beam_stats"))
