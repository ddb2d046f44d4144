"""The shapes of the broker's results: one TypedDict per tool result, the schema of record.

The MCP layer sends these as `structuredContent` unchanged, so each shape here is the wire shape
docs/BROKER.md describes ("Result shapes"); `tests/broker/test_result_shapes.py` checks real answers
against them key by key. Lean's own answers (hover contents, symbols, locations) pass through as
Lean sent them and are typed loosely here. Postponed annotations are off on purpose: `NotRequired`
must be seen at class creation for `__required_keys__` to be right on every supported Python.
"""

from typing import Any, Literal, TypeVar, cast

from typing_extensions import NotRequired, TypedDict

T = TypeVar("T")

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
    counts: dict[str, int]  # error, warning, information, hint, unknown, total
    complete: bool  # false: the barrier had not finished within wait_ms
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
    retry_after_ms: NotRequired[int]  # only on a partial answer


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
    trace: NotRequired[str]
    sync: SyncBody


class SaveResult(Saved):
    workspace: Workspace
    document_progress: DocumentProgress
    retry_after_ms: NotRequired[int]


class CloseSaveResult(TypedDict):
    workspace: Workspace
    closed: bool
    document_progress: DocumentProgress
    saved: Saved


class LeanAnswer(TypedDict):
    """Hover and signature help: Lean's answer object merged beside the workspace."""

    workspace: Workspace
    version: int
    position: Position
    result: NotRequired[LeanValue]  # when Lean answered something other than an object
    contents: NotRequired[LeanValue]
    range: NotRequired[Range]
    signatures: NotRequired[list[LeanValue]]
    activeSignature: NotRequired[int]
    activeParameter: NotRequired[int]


class ListResult(TypedDict):
    """Definition, references and symbols: a list (locations become ``{uri, path, range}``)."""

    workspace: Workspace
    result: list[LeanValue]
    version: NotRequired[int]  # document tools echo the version they used
    position: NotRequired[Position]  # position tools echo the resolved position


class Hypothesis(TypedDict):
    names: list[str]  # [] for an anonymous hypothesis
    type: str
    value: NotRequired[str]  # let-bound hypotheses


class Goal(TypedDict):
    """One goal, from RPC or from the plainGoal text."""

    userName: NotRequired[str]
    kind: Literal["goal", "conv"]
    hyps: list[Hypothesis]
    target: str


class GoalsResult(TypedDict):
    workspace: Workspace
    path: str
    version: int
    position: Position
    mode: Literal["before", "after"]
    source: Literal["rpc", "plainGoal"]
    goals: list[Goal]


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


class ProofState(TypedDict):
    goals: list[Goal]


class RunResult(TypedDict):
    workspace: Workspace
    version: NotRequired[int]  # run_at: the version probed (run_with continues a handle)
    position: NotRequired[Position]
    success: bool
    reason: NotRequired[Literal["usesSorry"]]  # success false without an error: it used sorry
    messages: list[dict[str, Any]]
    traces: list[str]
    proof_state: ProofState | None
    next_handle: Handle | None
    stale_imports: NotRequired[bool]  # Lean kept answering from imports older than on disk
    stale_modules: NotRequired[list[str]]


class ReleaseResult(TypedDict):
    workspace: Workspace
    result: None


class DropResult(TypedDict):
    workspace: Workspace
    dropped: bool
    invalidated_handles: int
    reason: NotRequired[Literal["notFound", "inUseByOtherAgents"]]
    other_agents: NotRequired[int]  # shared host: agents still using the workspace


class FeedbackResult(TypedDict):
    markdown: str
    metadata: dict[str, Any]
    collected: NotRequired[dict[str, Any]]
    bundle_dir: NotRequired[str]
    zip_path: NotRequired[str]
    workspace: NotRequired[Workspace]


class VerifyModule(TypedDict):
    module: str
    path: str
    built: bool
    errors: list[dict[str, Any]]  # {path, line, message}, the first few


class VerifyDeclaration(TypedDict):
    name: str  # a constant's name, or `<path>:<line>` for a finding outside any declaration
    axioms: list[str] | None
    flags: list[str]


class VerifyStatement(TypedDict):
    name: str
    status: Literal["unchanged", "changed", "missing"]


class VerifyPolicy(TypedDict):
    allowed_axioms: list[str]
    forbid_sorry: bool
    forbid_native: bool
    forbid_implemented_by: bool
    forbid_debug_options: bool
    forbid_search_tactics: bool


class VerifyResult(TypedDict):
    """An answer from Lake's batch build only."""

    workspace: Workspace
    ok: bool
    modules: list[VerifyModule]
    declarations: list[VerifyDeclaration]
    flagged: list[str]
    statements: list[VerifyStatement]
    policy: VerifyPolicy
    reason: NotRequired[Literal["nothingChecked"]]
    complete: bool
    toolchain: str | None
    manifest_hash: str | None
    sources: dict[str, str]
    receipt: dict[str, Any] | None
    build: NotRequired[dict[str, Any]]
    receipt_valid: NotRequired[bool]
    stale: NotRequired[list[str]]
    receipt_mismatch: NotRequired[LeanValue]
    changed_during_verify: NotRequired[list[str]]
    retry_after_ms: NotRequired[int]


class SearchHit(TypedDict):
    name: str
    kind: str
    signature: str
    path: str
    line: int


class SearchResult(TypedDict):
    workspace: Workspace
    hits: list[SearchHit]
    indexed_files: int
    complete: bool  # false: from what was indexed in time (reason says why)
    reason: NotRequired[Literal["indexing", "unreadable"]]
    unreadable: NotRequired[list[str]]  # source trees or files not read within the bound
    retry_after_ms: NotRequired[int]  # with reason "indexing": the index is still being built


class TrySuccess(TypedDict):
    """Tactics of one position that succeeded with the same proof state."""

    tactics: list[int]  # indices into TryResult.tactics
    goals_after: int | None  # None: no proof state came back
    first_goal: NotRequired[str]  # the first goal's target
    handle: NotRequired[Handle]  # continues from the state after the group's first tactic


class TryFailure(TypedDict):
    """Tactics of one position that failed the same way."""

    tactics: list[int]
    error: NotRequired[int]  # index into TryResult.errors
    reason: NotRequired[Literal["usesSorry"]]  # no error, but the tactic used sorry


class TrySkip(TypedDict):
    tactics: list[int]
    reason: Literal["stopOnFirstSuccess", "limit"]


class TrySuggestion(TypedDict):
    tactic: int
    text: str


class TryPosition(TypedDict):
    position: Position
    succeeded: list[TrySuccess]
    failed: list[TryFailure]
    skipped: list[TrySkip]
    suggestions: NotRequired[list[TrySuggestion]]  # with suggest: one per distinct text


class TryOmitted(TypedDict):
    """What the answer left out to fit the result budget."""

    errors: NotRequired[int]  # characters of error texts
    handles: NotRequired[int]  # success groups without their handle
    goals: NotRequired[int]  # characters of first_goal texts


class TryResult(TypedDict):
    workspace: Workspace
    path: str
    version: int
    tactics: list[str]  # every tactic tried at each position, the suggest tactics last
    errors: list[str]  # each distinct error text once
    positions: list[TryPosition]  # in input order; every pair is in exactly one group
    omitted: NotRequired[TryOmitted]


Result = dict[str, Any]  # any of the shapes above, as the adapter passes it on


def shaped(tp: type[T], value: Any) -> T:
    """`value` declared as the result shape `tp` (checked key by key by the shape tests)."""
    return cast(T, value)
