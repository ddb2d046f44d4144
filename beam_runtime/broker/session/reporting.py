"""What one call tells the client while it runs: progress, setup lines, live diagnostics.

As docs/MCP.md ("Progress and logs") describes: one preparation update, Lake setup lines (first
and every tenth), throttled file progress with at most one final ``done``, and
``lean.diagnostic`` logs filtered by ``diagnostic_scope`` (the MCP layer applies the log level).
"""

from __future__ import annotations

from typing import Any, Protocol

from beam_runtime.broker.session import diagnostics as diag
from beam_runtime.broker.session.documents import OpenDocument
from beam_runtime.broker.session.paths import SourceFile

_PROGRESS_STEP = 25
_SETUP_STEP = 10


class Context(Protocol):
    """The part of ``beam_mcp.backend.ToolContext`` the broker uses."""

    @property
    def tool(self) -> str: ...

    @property
    def owner(self) -> str:
        """Who the call's handles and scratch documents belong to: ``""`` for the process
        itself, a connection's id on a shared Lean host (docs/HOST.md)."""
        ...

    def progress(self, message: str) -> None: ...

    def status(self, state: str = "running", message: str | None = None) -> None: ...

    def diagnostic(self, item: dict[str, Any]) -> None: ...


class CallReport:
    def __init__(self, ctx: Context, path: str | None, scope: str | None = None) -> None:
        self.ctx = ctx
        self.path = path
        self.scope = scope  # None: this tool streams no diagnostics
        self._last_updates: int | None = None
        self._last_done = False
        self._setup_lines = 0

    @property
    def subject(self) -> str:
        return f"{self.ctx.tool} on {self.path}" if self.path else self.ctx.tool

    def preparing(self) -> None:
        self.ctx.progress(f"{self.subject}: preparing the Lean workspace")

    def setup_line(self, line: str) -> None:
        self._setup_lines += 1
        if self._setup_lines == 1:
            message = f"{self.subject}: preparing Lean dependencies"
            self.ctx.status("preparing_dependencies", message)
        if self._setup_lines == 1 or self._setup_lines % _SETUP_STEP == 0:
            self.ctx.progress(f"{self.subject}: preparing Lean dependencies — {line}")

    def attach(self, doc: OpenDocument) -> None:
        doc.listeners.append(self._listener(doc))

    def detach(self, doc: OpenDocument) -> None:
        doc.listeners[:] = [
            item for item in doc.listeners if getattr(item, "owner", None) is not self
        ]

    def _listener(self, doc: OpenDocument) -> Any:
        def listen(kind: str, payload: dict[str, Any]) -> None:
            if kind == "progress":
                self._file_progress(doc)
            else:
                self._diagnostics(doc, payload.get("diagnostics") or [])

        listen.owner = self  # type: ignore[attr-defined]
        return listen

    def _file_progress(self, doc: OpenDocument) -> None:
        progress = doc.progress
        if self._last_done:
            return
        first = self._last_updates is None
        last = self._last_updates
        far = last is not None and progress.updates - last >= _PROGRESS_STEP
        if first or progress.done or far:
            self._last_updates = progress.updates
            self._last_done = progress.done
            state = "processed" if progress.done else "processing"
            span = f"range={progress.start_line or 1}..{progress.end_line or 1} "
            self.ctx.progress(
                f"{self.ctx.tool}: {state} {doc.source.display} ({span}"
                f"updates={progress.updates} done={str(progress.done).lower()})"
            )

    def _diagnostics(self, doc: OpenDocument, items: list[diag.Diagnostic]) -> None:
        if len(items) == 1 and diag.is_setup_line(items[0]):
            self.setup_line(diag.message_of(items[0]))
            return
        if self.scope is None:
            return
        for item in items:
            shaped = diag.to_item(item, doc.source.display, doc.uri)
            if diag.in_scope(shaped, self.scope):
                self.ctx.diagnostic(shaped)


class Preparing:
    """Told each file a named document leads to (`named.NamedDocument`): the call's report for
    that file, with its preparation update sent."""

    def __init__(self, ctx: Context, scope: str | None = None) -> None:
        self._ctx = ctx
        self._scope = scope
        self.report: CallReport | None = None

    def __call__(self, source: SourceFile) -> None:
        self.report = CallReport(self._ctx, source.display, self._scope)
        self.report.preparing()
