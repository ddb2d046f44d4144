"""The arguments each broker operation reads, as protocols: the attributes, not a model.

Arguments arrive as the MCP layer's input models, as the objects ``beam_mcp/tools/admit.py``
builds from ``fields.json`` without pydantic, or as ``standalone.Call`` from the command line;
the broker reads all of them through these attributes and imports none of them. Read-only
properties, so a model's narrower field (a ``Literal``, a ``list``) satisfies them. Only type
checkers read this module: operations import it under ``TYPE_CHECKING``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class LeanArgs(Protocol):
    """Every Lean tool: the caller's bound on waiting (None: the server's default)."""

    @property
    def wait_ms(self) -> int | None: ...


class PathArgs(LeanArgs, Protocol):
    @property
    def path(self) -> str: ...


class SyncArgs(PathArgs, Protocol):
    """``lean_sync`` and ``lean_refresh``."""

    @property
    def diagnostic_scope(self) -> str: ...
    @property
    def diagnostics_in_result(self) -> bool: ...


class SaveArgs(PathArgs, Protocol):
    """``lean_save`` and ``lean_close_save``."""

    @property
    def diagnostic_scope(self) -> str: ...


class SearchArgs(LeanArgs, Protocol):
    """``lean_search``."""

    @property
    def query(self) -> str: ...
    @property
    def kind(self) -> str | None: ...
    @property
    def limit(self) -> int: ...


class DocumentArgs(PathArgs, Protocol):
    """A document tool: the file and the version the caller last saw (None: any)."""

    @property
    def version(self) -> int | None: ...


class PositionForm(Protocol):
    """One position, in exactly one of its forms (``queries/positions.py`` checks which)."""

    @property
    def line(self) -> int | None: ...
    @property
    def character(self) -> int | None: ...
    @property
    def line1(self) -> int | None: ...
    @property
    def match(self) -> str | None: ...
    @property
    def occurrence(self) -> int | None: ...
    @property
    def declaration(self) -> str | None: ...
    @property
    def sorry(self) -> int | None: ...


class PositionArgs(PositionForm, DocumentArgs, Protocol):
    """``lean_hover``, ``lean_signature_help``, ``lean_definition``."""


class ReferencesArgs(PositionArgs, Protocol):
    @property
    def include_declaration(self) -> bool: ...


class GoalsArgs(PositionArgs, Protocol):
    @property
    def mode(self) -> str: ...  # "before" or "after"


class WorkspaceSymbolsArgs(LeanArgs, Protocol):
    @property
    def query(self) -> str: ...


class TodoArgs(DocumentArgs, Protocol):
    @property
    def start_line(self) -> int: ...
    @property
    def start_character(self) -> int: ...
    @property
    def end_line(self) -> int | None: ...
    @property
    def end_character(self) -> int | None: ...
    @property
    def kinds(self) -> Sequence[str]: ...
    @property
    def suggest(self) -> str: ...  # "none" or "basic"


class CodeActionArgs(DocumentArgs, Protocol):
    @property
    def code_action(self) -> Mapping[str, Any]: ...


class RunAtArgs(PositionArgs, Protocol):
    """``lean_run_at`` and ``lean_run_at_handle``."""

    @property
    def text(self) -> str: ...


class HandleRef(Protocol):
    @property
    def id(self) -> str: ...


class HandleArgs(PathArgs, Protocol):
    """``lean_release``."""

    @property
    def handle(self) -> HandleRef: ...


class RunWithArgs(HandleArgs, Protocol):
    """``lean_run_with`` and ``lean_run_with_linear``."""

    @property
    def text(self) -> str: ...


class TryArgs(DocumentArgs, Protocol):
    @property
    def positions(self) -> Sequence[PositionForm]: ...
    @property
    def tactics(self) -> Sequence[str]: ...
    @property
    def stop_on_first_success(self) -> bool: ...
    @property
    def limit(self) -> int | None: ...
    @property
    def suggest(self) -> bool: ...


class VerifyArgs(Protocol):
    """``lean_verify``: one ``path`` or several ``paths``, under one deadline."""

    @property
    def path(self) -> str | None: ...
    @property
    def paths(self) -> Sequence[str] | None: ...
    @property
    def declarations(self) -> Sequence[str] | None: ...
    @property
    def receipt(self) -> dict[str, Any] | None: ...
    @property
    def wait_ms(self) -> int: ...


class Evidence(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def content(self) -> Any: ...


class FeedbackArgs(Protocol):
    """``beam_feedback_report``."""

    @property
    def title(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def reproduction(self) -> str: ...
    @property
    def expected(self) -> str: ...
    @property
    def actual(self) -> str: ...
    @property
    def impact(self) -> str | None: ...
    @property
    def workaround(self) -> str | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def severity(self) -> str: ...
    @property
    def tags(self) -> Sequence[str]: ...
    @property
    def evidence(self) -> Sequence[Evidence]: ...
    @property
    def bundle(self) -> str: ...
    @property
    def redact(self) -> bool: ...
    @property
    def confidential(self) -> bool: ...
    @property
    def include_collected(self) -> bool: ...
