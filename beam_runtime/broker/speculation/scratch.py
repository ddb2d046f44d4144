"""Scratch documents: where speculative probes run, so the real document is never touched.

A scratch document is a ``file:`` URI of a hidden sibling of the source file that does not exist
on disk (Lake's per-file setup still applies because it sits in the same directory). It is opened
once and afterwards only receives full-text ``didChange`` notifications, so Lean keeps the
elaborated prefix shared by consecutive probes and only re-runs what follows the first changed
command. It is never saved and never written.

Pools: at most ``per_document`` scratch documents per source document (probes on one document run in
parallel up to that number, then queue) and ``per_process`` in total (making room closes the least
recently used idle one; when all are busy the caller waits). On a shared host both caps apply
per agent (owner): an agent never takes another's scratch document away, and the memory budget
(``session/budget.py``) bounds the sum. Idle ones are closed after ``idle_s``,
because each open document costs Lean a worker process. A ``beyond_pool`` borrow (``lean_try``)
skips the per-document limit, so one call can use every scratch document the process cap allows;
``trim`` closes the extra ones afterwards.

A worker loads its imports once, so a scratch document whose imports were rebuilt since it was
opened is closed and opened again before the next probe (``freshness.py``).
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskStatus

from beam_runtime.broker import errors
from beam_runtime.broker.config import PoolConfig
from beam_runtime.broker.session import edits
from beam_runtime.broker.session.diagnostics import is_stale_marker
from beam_runtime.broker.session.documents import OpenDocument
from beam_runtime.broker.session.header import imports as header_imports
from beam_runtime.broker.session.paths import SourceFile, path_to_uri
from beam_runtime.broker.session.session import LeanSession
from beam_runtime.broker.session.versions import content_digest
from beam_runtime.broker.speculation import freshness
from beam_runtime.lsp import messages


@dataclass(eq=False)
class ScratchDocument:
    session: LeanSession
    source: SourceFile  # the real file this scratch document shadows
    mirror: OpenDocument  # what the broker knows of the scratch text in Lean
    owner: str = ""  # the connection it belongs to on a shared host; "" in-process
    opened: bool = False
    busy: bool = False
    closed: bool = False
    last_used: float = field(default_factory=time.monotonic)
    header: str | None = None  # the header the current worker loaded
    stamps: dict[str, freshness.Stamp] = field(default_factory=dict)  # of its imports then
    stale_modules: list[str] = field(default_factory=list)  # after the last load, if any

    @property
    def uri(self) -> str:
        return self.mirror.uri

    def observe(self, method: str, params: dict) -> None:
        if method == "$/lean/fileProgress":
            self.mirror.on_progress(params)
        else:
            self.mirror.on_diagnostics(params)

    async def load(self, text: str) -> OpenDocument:
        """Send ``text`` to Lean (open once, then full ``didChange``), then wait for it.

        A worker that loaded imports which have been rebuilt since, or that Lean itself calls
        out of date, is replaced first (close, then open again: a new worker loads them anew).
        If Lean still reports stale imports after that, ``stale_modules`` names them.
        """
        self.stale_modules = []
        modules = header_imports(text)
        now = self._stamps(modules)
        header = freshness.header_text(text)
        rebuilt = freshness.changed(self.stamps, now) if header == self.header else []
        if self.opened and rebuilt:
            await self._reopen()
        mirror = await self._send(text, header, now)
        if _stale_notice(mirror):
            await self._reopen()
            mirror = await self._send(text, header, self._stamps(modules))
            if _stale_notice(mirror):
                self.stale_modules = rebuilt or modules
        return mirror

    def _stamps(self, modules: list[str]) -> dict[str, freshness.Stamp]:
        return freshness.stamps(self.session.root, modules, self.session.saved_modules)

    async def _send(self, text: str, header: str, now: dict[str, freshness.Stamp]) -> OpenDocument:
        data = text.encode("utf-8")
        mirror = self.mirror
        old_text = mirror.text.text
        mirror.new_version(mirror.version + 1, data, content_digest(data))
        work = self.session.work
        if not self.opened:
            if self.session.admit_worker is not None:
                await self.session.admit_worker()
            self.opened = True
            work.opened(header)
            opening = messages.did_open(self.uri, mirror.version, text)
            await self.session.notify("textDocument/didOpen", opening)
        else:
            content, ranged = edits.content_change(old_text, mirror.text.text)
            work.changed(ranged=ranged)
            if header != self.header:
                work.worker_started(header)
            change = messages.did_change(self.uri, mirror.version, [content])
            await self.session.notify("textDocument/didChange", change)
        if header != self.header:  # a new header: Lean restarts the worker, which loads now
            self.header, self.stamps = header, now
        await self.session.barrier(mirror)
        return mirror

    async def _reopen(self) -> None:
        """Close the scratch document in Lean: its worker ends, the next open starts anew."""
        self.opened = False
        self.header = None
        await self.session.forget_rpc(self.uri)
        await self.session.notify("textDocument/didClose", messages.did_close(self.uri))

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.session.uri_observers.pop(self.uri, None)
        if self.opened and self.session.alive:
            with anyio.CancelScope(shield=True):
                await self.session.forget_rpc(self.uri)
                await self.session.notify("textDocument/didClose", messages.did_close(self.uri))


def _shared(a: bytes, b: bytes) -> int:
    """Length of the common start of two texts."""
    limit = min(len(a), len(b))
    index = 0
    step = 4096
    while index < limit and a[index : index + step] == b[index : index + step]:
        index += step
    index = min(index, limit)
    while index < limit and a[index] == b[index]:
        index += 1
    return index


def _stale_notice(mirror: OpenDocument) -> bool:
    return any(is_stale_marker(item) for item in mirror.diagnostics)


def _busy(docs: list[ScratchDocument], session: LeanSession, source: SourceFile, owner: str) -> int:
    return sum(
        1
        for doc in docs
        if doc.busy
        and doc.session is session
        and doc.source.abs_path == source.abs_path
        and doc.owner == owner
    )


@dataclass(eq=False)
class DocumentPool:
    slots: anyio.Semaphore
    free: list[ScratchDocument] = field(default_factory=list)


class ScratchRegistry:
    """Every scratch document of the process, grouped by session, source file and owner (the
    connection of a shared host that borrowed it; ``""`` in-process)."""

    def __init__(self, config: PoolConfig) -> None:
        self.config = config
        self.pools: dict[tuple[LeanSession, str, str], DocumentPool] = {}
        self.open: list[ScratchDocument] = []
        self._serial = 0
        self._freed = anyio.Event()

    def count(self, session: LeanSession) -> int:
        return sum(1 for doc in self.open if doc.session is session)

    @asynccontextmanager
    async def borrow(
        self,
        session: LeanSession,
        source: SourceFile,
        text: str = "",
        *,
        beyond_pool: bool = False,
        owner: str = "",
    ) -> AsyncIterator[ScratchDocument]:
        """A scratch document for ``source``, exclusively for the duration of the block.

        Of the free ones, the one whose text in Lean shares the longest start with ``text`` (the
        probe about to run), so that Lean re-elaborates the least: nearby probes of one source
        document land on the same scratch document. ``beyond_pool``: only the process cap applies.
        """
        pool = self._pool(session, source, owner)
        if not beyond_pool:
            with anyio.fail_after(self.config.wait_s):
                await pool.slots.acquire()
        try:
            doc = await self._obtain(pool, session, source, text.encode("utf-8"), owner)
            doc.busy = True
            failed = True
            try:
                yield doc
                failed = False
            finally:
                doc.busy = False
                doc.last_used = time.monotonic()
                if failed or doc.closed:
                    await self._discard(doc)  # its state in Lean is unknown: start afresh
                else:
                    pool.free.append(doc)
                self._wake()
        finally:
            if not beyond_pool:
                pool.slots.release()

    def _pool(self, session: LeanSession, source: SourceFile, owner: str) -> DocumentPool:
        key = (session, source.abs_path, owner)
        pool = self.pools.get(key)
        if pool is None:
            pool = self.pools[key] = DocumentPool(anyio.Semaphore(self.config.per_document))
        return pool

    async def trim(self, session: LeanSession, source: SourceFile, owner: str = "") -> None:
        """Close the free scratch documents of ``source`` beyond its per-document pool, least
        recently used first (after a ``beyond_pool`` call)."""
        pool = self.pools.get((session, source.abs_path, owner))
        if pool is None:
            return
        keep = max(0, self.config.per_document - _busy(self.open, session, source, owner))
        extra = sorted(pool.free, key=lambda doc: doc.last_used, reverse=True)[keep:]
        for doc in extra:
            await self._discard(doc)

    async def _obtain(
        self, pool: DocumentPool, session: LeanSession, source: SourceFile, text: bytes, owner: str
    ) -> ScratchDocument:
        """A free scratch document of this pool, else a new one within the owner's cap (the
        process cap; on a shared host every agent has the allowance it would have alone)."""
        with anyio.fail_after(self.config.wait_s):
            while True:
                if pool.free:
                    best = max(pool.free, key=lambda doc: _shared(doc.mirror.data, text))
                    pool.free.remove(best)
                    return best
                mine = [doc for doc in self.open if doc.owner == owner]
                if len(mine) < self.config.per_process:
                    return self._create(session, source, owner)
                idle = [doc for doc in mine if not doc.busy]
                if idle:
                    await self._discard(min(idle, key=lambda doc: doc.last_used))
                else:
                    await self._freed.wait()

    def _create(self, session: LeanSession, source: SourceFile, owner: str) -> ScratchDocument:
        if not session.alive:
            raise errors.worker_exited("the Lean session of this workspace was stopped")
        path = self._scratch_path(source.abs_path)
        scratch_source = SourceFile(source.root, path, source.display, path_to_uri(path))
        mirror = OpenDocument(scratch_source, 0, b"", "")
        doc = ScratchDocument(session, source, mirror, owner)
        session.uri_observers[doc.uri] = doc.observe
        self.open.append(doc)
        return doc

    def _scratch_path(self, abs_path: str) -> str:
        directory, name = os.path.split(abs_path)
        stem = name[:-5] if name.endswith(".lean") else name
        while True:
            self._serial += 1
            candidate = os.path.join(directory, f".{stem}.beam-scratch-{self._serial}.lean")
            if not os.path.lexists(candidate):
                return candidate

    async def _discard(self, doc: ScratchDocument) -> None:
        if doc in self.open:
            self.open.remove(doc)
        for pool in self.pools.values():
            if doc in pool.free:
                pool.free.remove(doc)
        await doc.close()
        self._wake()

    def _wake(self) -> None:
        freed, self._freed = self._freed, anyio.Event()
        freed.set()

    def forget_session(self, session: LeanSession) -> None:
        """The session stopped: its scratch documents died with its Lean server."""
        for doc in [doc for doc in self.open if doc.session is session]:
            doc.closed = True
            self.open.remove(doc)
            session.uri_observers.pop(doc.uri, None)
        for key in [key for key in self.pools if key[0] is session]:
            del self.pools[key]
        self._wake()

    async def forget_owner(self, owner: str) -> None:
        """Close the idle scratch documents of ``owner``; busy ones close when returned."""
        for doc in [doc for doc in self.open if doc.owner == owner and not doc.busy]:
            await self._discard(doc)
        for key in [key for key, pool in self.pools.items() if key[2] == owner and not pool.free]:
            if not any(d.owner == owner and d.busy for d in self.open):
                del self.pools[key]

    async def discard_if_idle(self, doc: ScratchDocument) -> bool:
        """Closes ``doc`` unless it is busy or gone (the memory budget makes room)."""
        if doc.busy or doc not in self.open:
            return False
        await self._discard(doc)
        return True

    async def close_idle(self) -> int:
        now = time.monotonic()
        idle = [
            doc for doc in self.open if not doc.busy and now - doc.last_used >= self.config.idle_s
        ]
        for doc in idle:
            await self._discard(doc)
        return len(idle)

    async def reap_idle(self, task_status: TaskStatus = anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        limit = self.config.idle_s
        if limit <= 0:
            return
        tick = max(0.02, min(limit / 4, 5.0))
        while True:
            await anyio.sleep(tick)
            await self.close_idle()
