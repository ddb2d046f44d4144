"""The document a tool names, under its lock and up to date with the file: one trip off the loop.

A tool's ``path`` is resolved once per session and remembered (`LeanSession.known_source`). A
later call checks the name again inside the same bounded trip that stats (and, if it changed,
reads) the file (`paths.read_snapshot` with the name), so an unchanged file costs one trip to a
reading thread per call. When the name now leads to another file (a symlink retargeted, a
directory moved) the call follows it (`paths.SourceMoved`) and takes that file's lock instead.
"""

from __future__ import annotations

from collections.abc import Callable

from beam_runtime.broker import errors
from beam_runtime.broker.session.documents import OpenDocument
from beam_runtime.broker.session.paths import SourceFile, SourceMoved, resolve_source_async
from beam_runtime.broker.session.session import DocumentLock, LeanSession

MOVES = 4  # re-resolutions a call accepts before it gives up on a name that keeps moving


class NamedDocument:
    """``async with NamedDocument(session, name) as (source, doc, changed)``: the document under
    its lock, synced with Lean (``changed``: this call sent Lean an edit).

    ``found`` is told each file the name leads to before its lock is taken (progress reports).
    A class rather than an ``asynccontextmanager``: it runs on every document call.
    """

    def __init__(
        self,
        session: LeanSession,
        name: str,
        found: Callable[[SourceFile], None] | None = None,
    ) -> None:
        self._session = session
        self._name = name
        self._found = found
        self._lock: DocumentLock | None = None

    async def __aenter__(self) -> tuple[SourceFile, OpenDocument, bool]:
        session, name = self._session, self._name
        source = session.known_source(name) or await resolve_source_async(session.root, name)
        for _ in range(MOVES):
            if self._found is not None:
                self._found(source)
            lock = session.document_lock(source)
            await lock.__aenter__()
            try:
                doc, changed = await session.sync_text(source, name)
            except SourceMoved as moved:  # the name leads elsewhere now: that file's lock
                await lock.__aexit__()
                source = moved.source
                continue
            except BaseException:
                await lock.__aexit__()
                session.remember_source(name, None)
                raise
            session.remember_source(name, source)
            self._lock = lock
            return source, doc, changed
        raise errors.invalid_input(
            f"{name} keeps leading to another file (a symlink changing under the call?)",
            "sourceMoving",
            path=name,
        )

    async def __aexit__(self, *exc: object) -> None:
        if self._lock is not None:
            lock, self._lock = self._lock, None
            await lock.__aexit__()
