"""One strict, closed pydantic model per tool input (docs/MCP.md, "Tools").

Imported lazily, on the first `tools/call` that needs validation; `schema.json` is generated from
these models by `beam_mcp.tools.generate`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Closed(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


Natural = Annotated[int, Field(ge=0)]
Ordinal = Annotated[int, Field(ge=1)]
DocVersion = Annotated[int, Field(ge=1)]


class Workspace(Closed):
    root: str = Field(description="Absolute project root.")


class Handle(Closed):
    id: str


class NoInput(Closed):
    pass


class WorkspaceOnly(Closed):
    workspace: Workspace


class LeanInput(WorkspaceOnly):
    wait_ms: Natural | None = None


class PathInput(LeanInput):
    path: str


class DocumentInput(PathInput):
    version: DocVersion | None = None


class PositionForm(Closed):
    """One position form; the broker checks that exactly one is given."""

    line: Natural | None = None
    character: Natural | None = None
    line1: Ordinal | None = None
    match: str | None = None
    occurrence: Ordinal | None = None
    declaration: str | None = None
    sorry: Ordinal | None = None


class PositionInput(PositionForm, DocumentInput):
    """One position form; the broker checks that exactly one is given."""


class RunAtInput(PositionInput):
    text: str


class ReferencesInput(PositionInput):
    include_declaration: bool = True


class WorkspaceSymbolsInput(LeanInput):
    query: str


class GoalsInput(PositionInput):
    mode: Literal["before", "after"]


TodoKind = Literal["sorry", "hole", "diagnostic", "code_action", "incomplete_proof"]


class TodoInput(DocumentInput):
    start_line: Natural = 0
    start_character: Natural = 0
    end_line: Natural | None = None
    end_character: Natural | None = None
    kinds: list[TodoKind] = Field(default_factory=list, description="[]: every kind.")
    suggest: Literal["none", "basic"] = "basic"


class CodeActionResolveInput(DocumentInput):
    code_action: dict[str, Any]


class HandleInput(PathInput):
    handle: Handle


class RunWithInput(HandleInput):
    text: str


DiagnosticScope = Literal["errors", "all"]


class SyncInput(PathInput):
    diagnostic_scope: DiagnosticScope = "errors"
    diagnostics_in_result: bool = False


class SaveInput(PathInput):
    diagnostic_scope: DiagnosticScope = "errors"


class Evidence(Closed):
    name: str
    content: Any
    path: str | None = None


class FeedbackInput(WorkspaceOnly):
    title: str
    summary: str
    reproduction: str
    expected: str
    actual: str
    kind: Literal["bug", "ux", "perf", "docs", "question"] = "bug"
    severity: Literal["low", "medium", "high", "critical"] = "medium"
    impact: str | None = None
    workaround: str | None = None
    tags: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    bundle: Literal["none", "dir", "zip"] = "none"
    redact: bool = True
    confidential: bool = False
    include_collected: bool = False


class VerifyInput(WorkspaceOnly):
    path: str | None = Field(None, description="The file to verify (or give paths).")
    paths: list[str] | None = Field(None, description="Several files to verify at once.")
    declarations: list[str] | None = Field(
        None,
        description="Names to check (full, or a unique suffix); omitted: every constant the "
        "files' modules add. An empty list checks nothing (reason nothingChecked).",
    )
    receipt: dict[str, Any] | None = Field(
        None, description="A receipt from an earlier lean_verify, to check without rebuilding."
    )
    wait_ms: Natural = 45000


DeclarationKind = Literal[
    "theorem",
    "lemma",
    "def",
    "abbrev",
    "instance",
    "structure",
    "inductive",
    "class",
    "opaque",
    "axiom",
]


class SearchInput(LeanInput):
    query: str = Field(
        max_length=1000, description="Name fragments or words of the statement (32 words at most)."
    )
    kind: DeclarationKind | None = None
    limit: Annotated[int, Field(ge=1, le=100)] = 20


class TryPosition(PositionForm):
    """A position inside a proof, in one position form (exactly one is checked)."""


class TryInput(PathInput):
    version: DocVersion | None = Field(
        None, description="Document version; omitted: the version just read from disk."
    )
    positions: list[TryPosition] = Field(
        min_length=1, max_length=16, description="Positions inside proofs, each a tactic start."
    )
    tactics: list[str] = Field(
        max_length=32,
        description="Tactic texts to try at every position (may be empty with suggest).",
    )
    stop_on_first_success: bool = Field(
        False, description="Skip a position's remaining tactics once one succeeds there."
    )
    limit: Annotated[int, Field(ge=1, le=1024)] | None = Field(
        None, description="Run at most this many pairs; the rest are listed in skipped."
    )
    suggest: bool = Field(
        False,
        description="Also run exact?, apply?, simp? (and aesop? when imported) and "
        "return their Try this suggestions.",
    )


def _by_tool() -> dict[str, type[Closed]]:
    """Each tool's input model, as its catalog row names it (the catalog is the one table)."""
    from beam_mcp.tools.catalog import TOOLS

    found = {spec.name: globals()[spec.model] for spec in TOOLS}
    assert all(issubclass(model, Closed) for model in found.values())
    return found


INPUT_MODELS: dict[str, type[Closed]] = _by_tool()
