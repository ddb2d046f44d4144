"""``lean_search`` for one server process: its open indexes, refreshes and the result shape.

No Lean session is needed. Each call finds the workspace's index (by key, under the user cache
dir), re-checks the workspace's own files, and the dependency trees (``.lake/packages``, the
toolchain sources) when they were last checked ``deps_recheck_s`` ago or more, then queries it,
all in worker threads. Dependencies change with the manifest or toolchain, which changes the key
anyway, so their files are only stat'ed now and then. The first build reports progress; a
process that finds another one writing an index that is already complete answers from what is
committed instead of waiting.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.from_thread
import anyio.to_thread

from beam_runtime.broker.errors import BrokerError
from beam_runtime.search.index import Hit, Index, cache_dir, database_path
from beam_runtime.search.sources import Sources, display_path, sources_of

KINDS = {"theorem": ("theorem", "lemma")}


class Reporter(Protocol):
    def progress(self, message: str) -> None: ...


@dataclass
class SearchConfig:
    cache_dir: str | None = None  # None: platformdirs' user cache dir for "beam"
    deps_recheck_s: float = 60.0
    build_wait_s: float = 600.0  # bound on waiting for another process's first build


@dataclass
class _Open:
    index: Index
    deps_checked: float = float("-inf")
    files: int = 0
    # One refresh and query at a time: calls share the index's SQLite connection (two agents
    # on one shared host search the same index at once).
    busy: anyio.Lock = field(default_factory=anyio.Lock)


@dataclass
class SearchService:
    config: SearchConfig = field(default_factory=SearchConfig)
    _open: dict[str, _Open] = field(default_factory=dict)

    async def search(
        self, root: str, query: str, kind: str | None, limit: int, ctx: Reporter
    ) -> dict[str, Any]:
        if not query.strip() or not any(char.isalnum() for char in query):
            raise BrokerError(
                "invalidParams",
                "the query has no words to search for",
                {"reason": "emptyQuery", "fix": "pass a name fragment or words of a statement"},
            )
        sources = sources_of(root, dict(os.environ))
        entry = await self._entry(sources)
        kinds = KINDS.get(kind, (kind,)) if kind else ()
        async with entry.busy:
            await self._refresh(entry, sources, ctx)
            hits = await anyio.to_thread.run_sync(entry.index.query, query, kinds, limit)
        return {
            "workspace": {"root": root},
            "hits": [_hit_json(root, hit) for hit in hits],
            "indexed_files": entry.files,
        }

    async def _entry(self, sources: Sources) -> _Open:
        entry = self._open.get(sources.key)
        if entry is None:
            directory = self.config.cache_dir or cache_dir()
            path = database_path(directory, sources)
            try:
                index = await anyio.to_thread.run_sync(Index, path)
            except Exception as error:  # sqlite3.Error as well as OSError
                raise _cache_error(str(path), error) from None
            entry = self._open.setdefault(sources.key, _Open(index))
        return entry

    async def _refresh(self, entry: _Open, sources: Sources, ctx: Reporter) -> None:
        report = _Progress(ctx, entry.index.complete())
        everything = time.monotonic() - entry.deps_checked >= self.config.deps_recheck_s
        trees = None if everything else (sources.root,)

        def work() -> None:
            _refresh_locked(entry, sources, trees, report, self.config.build_wait_s)

        await anyio.to_thread.run_sync(work)
        if everything:
            entry.deps_checked = time.monotonic()

    def close(self) -> None:
        for entry in self._open.values():
            entry.index.close()
        self._open.clear()


class _Progress:
    """Progress lines while an index is being built or updated (from the worker thread)."""

    def __init__(self, ctx: Reporter, complete: bool) -> None:
        self.ctx = ctx
        self.first = not complete

    def __call__(self, done: int, total: int) -> None:
        what = "building the search index" if self.first else "updating the search index"
        message = f"lean_search: {what}: {done}/{total} files"
        anyio.from_thread.run_sync(self.ctx.progress, message)


def _refresh_locked(
    entry: _Open,
    sources: Sources,
    trees: tuple[str, ...] | None,
    report: _Progress,
    wait_s: float,
) -> None:
    from filelock import FileLock, Timeout

    lock = FileLock(entry.index.lock_path)
    complete = entry.index.complete()
    try:
        lock.acquire(timeout=0 if complete else wait_s)
    except Timeout:
        if complete:  # another server is writing; what it committed is good enough now
            entry.files = entry.index.file_count()
            return
        raise BrokerError(
            "timeout",
            f"another process held the search index lock for {int(wait_s)} s",
            {
                "phase": "searchIndex",
                "waited_ms": int(wait_s * 1000),
                "lock": lock.lock_file,
                "fix": "retry lean_search once the other lean-beam server has built the index",
            },
        ) from None
    try:
        entry.files = entry.index.refresh(sources, report, trees)
    finally:
        lock.release()
    if not complete:
        _prune_siblings(entry.index.path)


def _prune_siblings(path: Path) -> None:
    """Indexes of the same root under an older toolchain or manifest are dead weight now."""
    root_part = path.name.split("-", 1)[0]
    for other in path.parent.glob(f"{root_part}-*.sqlite3"):
        if other == path:
            continue
        for leftover in (
            other,
            *(Path(f"{other}{end}") for end in ("-wal", "-shm", ".lock", ".setup.lock")),
        ):
            with contextlib.suppress(OSError):
                leftover.unlink()


def _cache_error(path: str, error: BaseException) -> BrokerError:
    return BrokerError(
        "internalError",
        f"cannot open the search index {path}: {error}",
        {"path": path, "fix": "make the user cache directory writable, or delete that file"},
    )


def _hit_json(root: str, hit: Hit) -> dict[str, Any]:
    return {
        "name": hit.name,
        "kind": hit.kind,
        "signature": hit.signature,
        "path": display_path(root, hit.path),
        "line": hit.line,
    }
