"""``lean_search`` for one server process: refreshes in worker threads, bounded waits, results.

No Lean session is needed. A call asks for a refresh of its workspace's index that starts no
earlier than the call (joining one already queued), waits for it up to ``wait_ms``, then queries
what is committed. A refresh runs in a daemon thread, never on the event loop, and touches the
workspace only through bounded calls (`beam_runtime.search.refresh`): the event loop keeps
answering whatever the file systems do, and EOF ends the process without waiting for a refresh.

A call whose refresh has not finished in time answers the hits committed so far with
``complete: false, reason: "indexing"`` and ``retry_after_ms`` (the refresh goes on; the next
call joins it). A refresh that failed is answered as a tool error to the calls that waited for
it: a file it could not read in time (``timeout``, ``data.phase: "read"``), the index that cannot
be opened. Source trees that could not be looked at in time are named in ``unreadable`` with
``complete: false, reason: "unreadable"``.

Costs: a refresh stats the few files the index key depends on, drains the change notices and
looks at the workspace's own tree (`beam_runtime.search.tree`); dependency trees
(``.lake/packages``, the toolchain sources), which change with the manifest or toolchain and so
with the key, are looked at when a notice names them and otherwise every ``deps_recheck_s``.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import anyio

from beam_runtime import safe_read
from beam_runtime.broker.errors import BrokerError, invalid_input, retry_after_ms
from beam_runtime.search import sources as src
from beam_runtime.search.index import (
    Corrupt,
    Hit,
    cache_dir,
    database_path,
    discard,
    open_index,
    query_words,
)
from beam_runtime.search.refresh import Keyed, Outcome, Stuck, Touch, bounded, refresh
from beam_runtime.search.tree import RACY_NS
from beam_runtime.search.watch import Notices, Watcher

KINDS = {"theorem": ("theorem", "lemma")}
MAX_QUERY_CHARS = 1000  # also the input schema's maxLength
MAX_QUERY_WORDS = 32
DEFAULT_WAIT_MS = 45_000  # the server passes its own default (--wait-ms)
MAX_INBOX = 10_000  # notices kept for one workspace between its refreshes
LOOK_INTERVAL_S = 1.0  # with every directory watched, a look at most this often


class Reporter(Protocol):
    def progress(self, message: str) -> None: ...


@dataclass
class SearchConfig:
    cache_dir: str | None = None  # None: platformdirs' user cache dir for "beam"
    deps_recheck_s: float = 60.0
    lock_wait_s: float = 600.0  # bound on waiting for another process's writer lock


@dataclass
class _Run:
    """One refresh of a workspace: who waits for it, and how it ended."""

    finished: anyio.Event = field(default_factory=anyio.Event)
    waiters: list[Reporter] = field(default_factory=list)
    outcome: Outcome | None = None
    error: BaseException | None = None
    first_build: bool = False


@dataclass
class _Workspace:
    root: str
    keyed: Keyed | None = None
    last: _Run | None = None  # the last refresh that finished
    looked: float = float("-inf")  # when the last refresh started (monotonic)
    stamp: src.Stamp | None = None  # of the files the key depends on
    sources_ns: int = 0  # when the sources were last computed (wall clock, ns)
    running: _Run | None = None
    queued: _Run | None = None
    opening: Touch | None = None  # an index open that was given up on
    inbox: Notices = field(default_factory=Notices)


class SearchService:
    def __init__(self, config: SearchConfig | None = None) -> None:
        self.config = config or SearchConfig()
        self._workspaces: dict[str, _Workspace] = {}
        self._watcher = Watcher()
        self._notices = threading.RLock()

    async def search(
        self,
        root: str,
        query: str,
        kind: str | None,
        limit: int,
        wait_ms: int | None,
        ctx: Reporter,
    ) -> dict[str, Any]:
        check_query(query)
        wait_ms = DEFAULT_WAIT_MS if wait_ms is None else wait_ms
        deadline = time.monotonic() + wait_ms / 1000
        ws = self._workspaces.setdefault(root, _Workspace(root))
        kinds = KINDS.get(kind, (kind,)) if kind else ()
        for attempt in (1, 2):
            if attempt == 1 and self._unchanged(ws):
                assert ws.last is not None
                run = ws.last
            else:
                run = self._request(ws)
                await _wait(run, ctx, deadline)
            if run.finished.is_set() and run.error is not None:
                raise _failure(run.error)
            try:
                hits = await self._query(ws, query, kinds, limit, deadline)
                break
            except Corrupt:  # found by the query: the next refresh rebuilds the index
                if ws.keyed is not None:
                    ws.keyed.damaged = True
                if attempt == 2:
                    return _result(ws, None, [], wait_ms)
        return _result(ws, run, hits, wait_ms)

    # ------------------------------------------------------------ refreshes

    def _unchanged(self, ws: _Workspace) -> bool:
        """Nothing a refresh would find: every directory is watched and no notice came, the
        last refresh is recent, complete and left nothing to read again. Then a search only
        queries (on the event loop this costs one non-blocking ``read`` of the notices)."""
        last, keyed = ws.last, ws.keyed
        if keyed is None or last is None or ws.running is not None or last.error is not None:
            return False
        outcome = last.outcome
        if outcome is None or not outcome.complete or outcome.unreadable:
            return False
        if keyed.unsettled or keyed.moved or keyed.named or keyed.damaged:
            return False
        now = time.monotonic()
        if now - ws.looked >= LOOK_INTERVAL_S or now - keyed.deps_checked >= (
            self.config.deps_recheck_s
        ):
            return False
        if not keyed.own.watched:
            return False
        self._distribute()
        return not ws.inbox

    def _request(self, ws: _Workspace) -> _Run:
        """A refresh that starts no earlier than now: a new one, or the one queued."""
        if ws.running is None:
            ws.running = _Run()
            self._start(ws, ws.running)
            return ws.running
        if ws.queued is None:
            ws.queued = _Run()
        return ws.queued

    def _start(self, ws: _Workspace, run: _Run) -> None:
        import asyncio

        loop = asyncio.get_running_loop()

        def body() -> None:
            try:
                run.outcome = self._refresh(ws, run, loop)
            except BaseException as exc:  # handed to the calls that wait
                run.error = exc
            finally:
                with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
                    loop.call_soon_threadsafe(self._finished, ws, run)

        threading.Thread(target=body, name="search-refresh", daemon=True).start()

    def _finished(self, ws: _Workspace, run: _Run) -> None:
        run.finished.set()
        ws.last = run
        ws.running, ws.queued = ws.queued, None
        if ws.running is not None:
            self._start(ws, ws.running)

    def _refresh(self, ws: _Workspace, run: _Run, loop: Any) -> Outcome:
        """The refresh itself, in its thread."""
        timeout = safe_read.TIMEOUT_S
        ws.looked = time.monotonic()
        keyed = ws.keyed
        everything = keyed is None or time.monotonic() - keyed.deps_checked >= (
            self.config.deps_recheck_s
        )
        sources = self._sources(ws, everything, timeout)
        if keyed is not None and keyed.damaged:
            keyed = self._rebuild(ws, keyed, timeout)
            everything = True
        elif keyed is None or keyed.sources != sources or keyed.index.replaced():
            keyed = self._open(ws, sources, timeout)
            everything = True
        run.first_build = not keyed.index.complete
        progress = partial(_progress, loop, run)
        notices = self._take_notices(ws)
        for attempt in (1, 2):
            try:
                outcome = refresh(
                    keyed, notices, everything, progress, self.config.lock_wait_s, timeout
                )
                break
            except Corrupt:
                if attempt == 2:
                    raise
                keyed = self._rebuild(ws, keyed, timeout)
                notices, everything = Notices(), True
        if everything:
            keyed.deps_checked = time.monotonic()
        if run.first_build and outcome.complete:
            _prune_siblings(keyed.index.path)
        return outcome

    def _sources(self, ws: _Workspace, everything: bool, timeout: float) -> src.Sources:
        """The workspace's sources: computed again at each look at everything, and when the
        files the key depends on moved or changed within 2 s before they were last read (a
        change within the same timestamp tick would not move their fingerprints)."""

        def look(touch: Touch) -> tuple[src.Stamp, int, src.Sources | None]:
            touch.at(ws.root)
            stamp = src.stamp(ws.root)
            settled = src.stamp_changed_ns(stamp) < ws.sources_ns - RACY_NS
            if stamp == ws.stamp and settled and not everything and ws.keyed is not None:
                return stamp, ws.sources_ns, None
            read_ns = time.time_ns()
            return stamp, read_ns, src.sources_of(ws.root, _environ(), touch.at)

        try:
            stamp, read_ns, sources = bounded(look, ws.root, timeout)
        except Stuck as stuck:
            raise safe_read.timed_out(stuck.touch.current, timeout) from None
        if sources is None:
            assert ws.keyed is not None
            return ws.keyed.sources
        ws.stamp, ws.sources_ns = stamp, read_ns
        return sources

    def _open(self, ws: _Workspace, sources: src.Sources, timeout: float) -> Keyed:
        path = database_path(self.config.cache_dir or cache_dir(), sources)
        if ws.opening is not None and not ws.opening.ended:
            raise _unopenable(path, timeout)
        ws.opening = None
        try:
            index = bounded(lambda touch: open_index(path), str(path), timeout)
        except Stuck as stuck:
            ws.opening = stuck.touch
            raise _unopenable(path, timeout) from None
        old, ws.keyed = ws.keyed, Keyed(sources, index, self._watcher)
        if old is not None:
            old.close()
            old.index.close()
        return ws.keyed

    def _rebuild(self, ws: _Workspace, keyed: Keyed, timeout: float) -> Keyed:
        """The index turned out damaged: discard it and start again."""
        keyed.index.close()
        discard(keyed.index.path, keyed.index.inode)
        keyed.close()
        ws.keyed = None
        return self._open(ws, keyed.sources, timeout)

    def _take_notices(self, ws: _Workspace) -> Notices:
        """This workspace's change notices; those drained now are shared with every
        workspace (each tree keeps only its own directories')."""
        with self._notices:
            self._distribute()
            taken, ws.inbox = ws.inbox, Notices()
        return taken

    def _distribute(self) -> None:
        """Drain the change notices into every workspace's inbox."""
        with self._notices:
            drained = self._watcher.drain()
            if drained:
                for other in self._workspaces.values():
                    _merge(other.inbox, drained)

    # ------------------------------------------------------------ queries

    async def _query(
        self, ws: _Workspace, query: str, kinds: tuple[str, ...], limit: int, deadline: float
    ) -> list[Hit]:
        keyed = ws.keyed
        if keyed is None:
            return []
        index = keyed.index
        seconds = min(safe_read.TIMEOUT_S, max(deadline - time.monotonic(), 1.0))
        try:
            return await safe_read.call_async(
                partial(index.query, query, kinds, limit), str(index.path), seconds
            )
        except safe_read.RefusedRead as exc:
            raise BrokerError(
                "timeout",
                f"cannot read the search index {index.path}: {exc.strerror}",
                {**safe_read.timeout_details(), "retry_after_ms": retry_after_ms(0)},
            ) from None
        except sqlite3.ProgrammingError:  # closed meanwhile (a new key, a rebuild)
            return []

    def close(self) -> None:
        """Release what can be released now; a refresh stuck in a file system keeps its
        thread (a daemon: it does not hold the process up)."""
        self._watcher.close()
        for ws in self._workspaces.values():
            if ws.keyed is not None:
                ws.keyed.close()
                ws.keyed.index.close(wait=False)
        self._workspaces.clear()


def check_query(query: str) -> list[str]:
    """The query's distinct words; an error for a query without words or with too many."""
    if len(query) > MAX_QUERY_CHARS:  # the input schema refuses it first
        raise invalid_input(
            f"the query is {len(query)} characters long; at most {MAX_QUERY_CHARS}",
            "queryTooLong",
            fix="search for a name fragment or a few words of the statement",
        )
    words = query_words(query)
    if not words:
        raise BrokerError(
            "invalidParams",
            "the query has no words to search for",
            {"reason": "emptyQuery", "fix": "pass a name fragment or words of a statement"},
        )
    if len(words) > MAX_QUERY_WORDS:
        raise invalid_input(
            f"the query has {len(words)} different words; at most {MAX_QUERY_WORDS}",
            "queryTooLong",
            fix="search for a name fragment or a few words of the statement",
        )
    return words


async def _wait(run: _Run, ctx: Reporter, deadline: float) -> None:
    run.waiters.append(ctx)
    try:
        with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
            await run.finished.wait()
    finally:
        run.waiters.remove(ctx)


def _progress(loop: Any, run: _Run, done: int, total: int) -> None:
    """From the refresh thread: a progress line to every call waiting for this refresh."""
    what = "building the search index" if run.first_build else "updating the search index"
    message = f"lean_search: {what}: {done}/{total} files"

    def send() -> None:
        for ctx in list(run.waiters):
            ctx.progress(message)

    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(send)


def _merge(into: Notices, more: Notices) -> None:
    """Add ``more`` to ``into``; an inbox nobody empties (a workspace no longer searched)
    turns into "anything may have changed" instead of growing."""
    into.overflowed = into.overflowed or more.overflowed
    into.listing |= more.listing
    for wd, names in more.content.items():
        into.content.setdefault(wd, set()).update(names)
    if len(into.listing) + sum(map(len, into.content.values())) > MAX_INBOX:
        into.listing.clear()
        into.content.clear()
        into.overflowed = True


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)


def _result(ws: _Workspace, run: _Run | None, hits: list[Hit], wait_ms: int) -> dict[str, Any]:
    root = ws.root
    keyed = ws.keyed
    outcome = run.outcome if run is not None and run.finished.is_set() else None
    files = outcome.files if outcome is not None else (len(keyed.index.rows) if keyed else 0)
    result: dict[str, Any] = {
        "workspace": {"root": root},
        "hits": [_hit_json(root, hit) for hit in hits],
        "indexed_files": files,
    }
    if outcome is None or not outcome.complete:
        result.update(complete=False, reason="indexing", retry_after_ms=retry_after_ms(wait_ms))
    elif outcome.unreadable:
        result.update(
            complete=False,
            reason="unreadable",
            unreadable=[src.display_path(root, path) for path in outcome.unreadable],
        )
    else:
        result["complete"] = True
    return result


def _failure(error: BaseException) -> BrokerError:
    if isinstance(error, BrokerError):
        return error
    if isinstance(error, safe_read.RefusedRead) and error.reason == "timeout":
        return BrokerError(
            "timeout",
            f"cannot read {error.filename}: {error.strerror}",
            {
                **safe_read.timeout_details(),
                "retry_after_ms": retry_after_ms(0),
                "fix": "check the mount that file is on, then call lean_search again",
            },
        )
    if isinstance(error, TimeoutError):
        return BrokerError(
            "timeout",
            str(error),
            {
                "phase": "searchIndex",
                "retry_after_ms": retry_after_ms(0),
                "fix": "call lean_search again once the other lean-beam server has written "
                "the index",
            },
        )
    return BrokerError(
        "internalError",
        f"lean_search failed: {type(error).__name__}: {error}",
        {"fix": "call lean_search again; if it fails the same way, report it"},
    )


def _unopenable(path: Path, timeout: float) -> BrokerError:
    return BrokerError(
        "timeout",
        f"cannot open the search index {path}: it did not answer within {timeout:g} s",
        {
            **safe_read.timeout_details(),
            "path": str(path),
            "retry_after_ms": retry_after_ms(0),
            "fix": "check the mount of the user cache directory (XDG_CACHE_HOME), or point "
            "XDG_CACHE_HOME at a local directory",
        },
    )


def _prune_siblings(path: Path) -> None:
    """Indexes of the same root under an older toolchain, manifest or format are dead weight
    now (in the refresh thread: it touches the cache directory)."""
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


def _hit_json(root: str, hit: Hit) -> dict[str, Any]:
    return {
        "name": hit.name,
        "kind": hit.kind,
        "signature": hit.signature,
        "path": src.display_path(root, hit.path),
        "line": hit.line,
    }
