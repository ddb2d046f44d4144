"""The shapes of the broker's results: one TypedDict per tool result, the schema of record.

The MCP layer sends these as `structuredContent` unchanged, so each shape here is the wire shape
decisions.md fixes; `tests/broker/test_result_shapes.py` checks real answers against them key by
key. Lean's own answers (hover contents, symbols, locations) pass through as Lean sent them and
are typed loosely here. Postponed annotations are off on purpose: `NotRequired` must be seen at
class creation for `__required_keys__` to be right on every supported Python.
"""

from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict

LeanValue = Any  # a JSON value as Lean sent it


class Workspace(TypedDict):
    root: str


class Position(TypedDict):
    line: int
    character: int


class Range(TypedDict):
    start: Position
    end: Position


class DocumentProgress(TypedDict):
    updates: int
    done: bool
    range_start_line: NotRequired[int]
    range_end_line: NotRequired[int]


class DiagnosticItem(TypedDict):
    """One `diagnostics.items[]` entry (also the `data` of one `lean.diagnostic` log)."""

    path: str
    uri: str
    severity: str
    range: Range
    message: str
    completion_blocking: bool
    save_blocking: bool


class Diagnostics(TypedDict):
    counts: dict[str, int]  # error, warning, information, hint, total
    items: NotRequired[list[DiagnosticItem]]


class BlockingDiagnostic(TypedDict):
    range: Range
    severity: Literal["error"]
    message: str
    save_blocking: bool
    completion_blocking: bool


class Readiness(TypedDict):
    save_ready: bool
    reason: str
    blocking_error_count: int
    blocking_diagnostics: list[BlockingDiagnostic]
    blocking_messages: list[LeanValue]


class UpdateResult(TypedDict):
    workspace: Workspace
    version: int
    changed: bool


class CloseResult(TypedDict):
    workspace: Workspace
    closed: bool


class SyncResult(TypedDict):
    workspace: Workspace
    path: str
    version: int
    diagnostics: Diagnostics
    readiness: Readiness
    document_progress: DocumentProgress


class SyncBody(TypedDict):
    path: str
    version: int
    diagnostics: Diagnostics
    readiness: Readiness


class Saved(TypedDict):
    path: str
    module: str
    version: int
    source_hash: str
    olean: str
    ilean: str
    c: NotRequired[str]
    sync: SyncBody


class SaveResult(Saved):
    workspace: Workspace
    document_progress: DocumentProgress


class CloseSaveResult(TypedDict):
    workspace: Workspace
    closed: bool
    document_progress: DocumentProgress
    saved: Saved


class LeanAnswer(TypedDict):
    """Hover and signature help: Lean's answer object merged beside the workspace."""

    workspace: Workspace
    result: NotRequired[LeanValue]  # when Lean answered something other than an object
    contents: NotRequired[LeanValue]
    range: NotRequired[Range]
    signatures: NotRequired[list[LeanValue]]
    activeSignature: NotRequired[int]
    activeParameter: NotRequired[int]


class ListResult(TypedDict):
    """Definition, references and symbols: a list, normalized where decision 35 says so."""

    workspace: Workspace
    result: list[LeanValue]


class GoalsResult(TypedDict):
    workspace: Workspace
    goals: list[dict[str, Any]]


class TodoResult(TypedDict):
    workspace: Workspace
    version: int
    range: Range
    items: list[dict[str, Any]]


class CodeActionResult(TypedDict):
    workspace: Workspace
    version: int
    code_action: LeanValue


class Handle(TypedDict):
    id: str


class RunResult(TypedDict):
    workspace: Workspace
    success: bool
    messages: list[dict[str, Any]]
    traces: list[dict[str, Any]]
    proof_state: dict[str, Any] | None
    next_handle: Handle | None


class ReleaseResult(TypedDict):
    workspace: Workspace
    result: None


class DropResult(TypedDict):
    workspace: Workspace
    dropped: bool
    invalidated_handles: int
    reason: NotRequired[Literal["notFound"]]


class FeedbackResult(TypedDict):
    markdown: str
    metadata: dict[str, Any]
    collected: NotRequired[dict[str, Any]]
    bundle_dir: NotRequired[str]
    zip_path: NotRequired[str]
    workspace: NotRequired[Workspace]


Result = dict[str, Any]  # any of the shapes above, as the adapter passes it on
