"""What the broker mirrors of one open document: text, version, diagnostics, progress.

Lean answers standard requests without naming a version, so every operation on a document runs
under its lock: re-read, edit, barrier and query never interleave for one file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.session import diagnostics as diag
from beam_runtime.broker.session.edits import Anchor
from beam_runtime.broker.session.paths import SourceFile
from beam_runtime.broker.session.progress import DocumentProgress
from beam_runtime.broker.session.text import DocumentText, normalize_newlines

if TYPE_CHECKING:
    from beam_runtime.broker.session.session import LeanSession

Listener = Callable[[str, dict[str, Any]], None]


class OpenDocument:  # a plain class: a dataclass costs half a millisecond to define
    def __init__(
        self, source: SourceFile, version: int, data: bytes, digest: str | None = None
    ) -> None:
        self.source = source
        self.version = version
        self.data = data
        self.digest = digest  # SHA-256 of ``data`` when the creator knew it; compare ``data``
        self.diagnostics: list[diag.Diagnostic] = []
        self.progress = DocumentProgress()
        self.crashed = False
        self.lock = anyio.Lock()
        self.last_used = time.monotonic()  # the memory budget closes the least recent first
        self.listeners: list[Listener] = []
        self._text: DocumentText | None = None
        self.anchor = Anchor()  # a line known in ``data``: edits count lines from there
        self.has_cr = b"\r" in data  # Lean holds the text with CRLF turned into LF

    @property
    def uri(self) -> str:
        return self.source.uri

    @property
    def text(self) -> DocumentText:
        """The current version's text, decoded once per version."""
        if self._text is None:
            self._text = DocumentText(normalize_newlines(self.data.decode("utf-8")))
        return self._text

    def new_version(
        self,
        version: int,
        data: bytes,
        digest: str | None = None,
        *,
        anchor: Anchor | None = None,
        has_cr: bool | None = None,
    ) -> None:
        """A new text was sent to Lean: forget what belonged to the old one."""
        self.version = version
        self.data = data
        self._text = None
        self.anchor = Anchor() if anchor is None else anchor
        self.has_cr = b"\r" in data if has_cr is None else has_cr
        self.digest = digest
        self.diagnostics = []
        self.progress = DocumentProgress()
        self.crashed = False

    def on_progress(self, params: dict[str, Any]) -> None:
        version = (params.get("textDocument") or {}).get("version")
        if isinstance(version, int) and version < self.version:
            return
        processing = params.get("processing")
        self.progress.observe(processing if isinstance(processing, list) else [])
        self._tell("progress", params)

    def on_diagnostics(self, params: dict[str, Any]) -> None:
        version = params.get("version")
        if isinstance(version, int) and version < self.version:
            return
        raw = params.get("diagnostics")
        items = diag.visible(raw if isinstance(raw, list) else [])
        if params.get("isIncremental") is True:
            self.diagnostics = self.diagnostics + items
        else:
            self.diagnostics = items
        self._tell("diagnostics", {"diagnostics": items})

    def on_crash(self) -> None:
        self.crashed = True
        self.progress.fatal = True

    def _tell(self, kind: str, payload: dict[str, Any]) -> None:
        for listener in list(self.listeners):
            listener(kind, payload)


def workspace(session: LeanSession) -> dict[str, Any]:
    return {"workspace": {"root": session.root}}


def check_version(doc: OpenDocument, expected: int | None) -> None:
    """A stale ``version`` names both versions the right way round, and the fix.

    ``None`` (the caller omitted ``version``) accepts the version just read from disk.
    """
    if expected is None or expected == doc.version:
        return
    name = doc.source.display
    raise BrokerError(
        "contentModified",
        f"version {expected} is stale: {name} is at version {doc.version}",
        {
            "reason": "documentVersionMismatch",
            "expectedVersion": expected,
            "currentVersion": doc.version,
            "uri": doc.uri,
            "fix": f"call lean_sync on {name} and pass version {doc.version} (or omit version)",
        },
    )
