"""Bringing one search index up to date with its source trees; runs in a worker thread.

A `Keyed` is one index key in this process: the database, a `Tree` per source tree, and the
paths that may differ from what the database holds. `refresh` looks at the trees (each look one
bounded call: a tree on a hung mount is given up on after the read bound, named in
``unreadable`` and left alone until that look returns), compares the candidates with the rows of
``files``, and, only when something differs, takes the writer lock and writes: files are read
by a prefetching thread while this one scans them, and written in large transactions.

Which rows are compared: the paths a look found moved or a change notice named, files whose
last read was racy once their racy window has passed, and every row after another process has
committed (SQLite's ``data_version``) or on the first refresh. A file's bytes are compared by
digest when its fingerprint did not move, so a touch or an identical rewrite costs a read but no
scan.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from beam_runtime import safe_read
from beam_runtime.search.index import Index, Stored, Update, digest
from beam_runtime.search.scan import declarations
from beam_runtime.search.sources import Sources
from beam_runtime.search.tree import RACY_NS, Changes, Fingerprint, Tree, fingerprint
from beam_runtime.search.watch import Notices, Watcher

T = TypeVar("T")
Progress = Callable[[int, int], None]  # (files scanned, files to scan)

BATCH_FILES = 1000  # files per transaction while writing
SETTLE_PER_REFRESH = 256  # racy files re-read by one refresh at most
_PREFETCH = 32  # files read ahead of the scan


class Touch:
    """One bounded call into a file system: the path it is at, and whether it has returned."""

    def __init__(self, name: str) -> None:
        self.current = name
        self.ended = False

    def at(self, path: str) -> None:
        self.current = path


class Stuck(Exception):
    """A bounded call was given up on; ``touch`` says where, and when it finally returns."""

    def __init__(self, touch: Touch, seconds: float) -> None:
        super().__init__(touch.current)
        self.touch = touch
        self.seconds = seconds


def bounded(fn: Callable[[Touch], T], name: str, timeout: float) -> T:
    """``fn(touch)`` in a pool thread of `beam_runtime.safe_read`, given up on after
    ``timeout`` seconds (`Stuck`); other `OSError`s pass through."""
    touch = Touch(name)

    def run() -> T:
        try:
            return fn(touch)
        finally:
            touch.ended = True

    try:
        return safe_read.call_bounded(run, name, timeout)
    except safe_read.RefusedRead as exc:
        if exc.reason in ("timeout", "noThread"):
            raise Stuck(touch, timeout) from None
        raise


@dataclass
class Outcome:
    files: int
    complete: bool
    unreadable: list[str]  # tree roots and files given up on


@dataclass
class Keyed:
    """One index key in this process."""

    sources: Sources
    index: Index
    watcher: Watcher | None
    trees: dict[str, Tree] = field(default_factory=dict)
    moved: set[str] = field(default_factory=set)  # paths to compare with their rows
    named: set[str] = field(default_factory=set)  # paths a notice named
    stuck: dict[str, Touch] = field(default_factory=dict)  # trees and files given up on
    unsettled: dict[str, int] = field(default_factory=dict)  # path -> when it can settle (ns)
    compare_all: bool = True
    damaged: bool = False  # a query found the database damaged: the next refresh rebuilds it
    deps_checked: float = float("-inf")
    outcome: Outcome | None = None

    def __post_init__(self) -> None:
        for root in self.sources.trees:  # only the workspace's own tree is watched: watches
            watcher = self.watcher if root == self.sources.root else None  # are a shared,
            self.trees.setdefault(root, Tree(root, watcher))  # limited resource of the user

    @property
    def own(self) -> Tree:
        return self.trees[self.sources.root]

    def close(self) -> None:
        for tree in self.trees.values():
            tree.forget()


def refresh(
    keyed: Keyed,
    notices: Notices,
    everything: bool,
    progress: Progress,
    lock_wait_s: float,
    timeout: float,
) -> Outcome:
    """Look at the trees (all of them with ``everything``, else the workspace's own and what
    notices name), then make the database agree with what was seen."""
    for root, tree in keyed.trees.items():
        look = everything or root == keyed.sources.root
        _look(keyed, tree, notices, look, timeout)
    outcome = _reconcile(keyed, progress, lock_wait_s, timeout)
    keyed.outcome = outcome
    return outcome


def _look(keyed: Keyed, tree: Tree, notices: Notices, look: bool, timeout: float) -> None:
    previous = keyed.stuck.get(tree.root)
    if previous is not None:
        if not previous.ended:
            return
        del keyed.stuck[tree.root]
        tree.scanned = False  # notices were missed meanwhile: walk it again, and compare
        keyed.compare_all = True  # every row (what the abandoned look saw went unreported)
    if not look and tree.scanned and not tree.concerns(notices):
        return
    try:
        changes = bounded(lambda touch: tree.check(notices, look), tree.root, timeout)
    except Stuck as stuck:
        keyed.stuck[tree.root] = stuck.touch
        return
    _note(keyed, changes)


def _note(keyed: Keyed, changes: Changes) -> None:
    keyed.moved |= changes.moved
    keyed.named |= changes.named


def _reconcile(keyed: Keyed, progress: Progress, lock_wait_s: float, timeout: float) -> Outcome:
    index = keyed.index
    rows = index.load()
    reads, removed = _differences(keyed, rows)
    if reads or removed or not index.complete:
        _write_locked(keyed, progress, lock_wait_s, timeout)
    else:
        keyed.moved.clear()
        keyed.named.clear()
        keyed.compare_all = False
    return Outcome(len(index.rows), index.complete, _unreadable(keyed))


def _unreadable(keyed: Keyed) -> list[str]:
    for path, touch in list(keyed.stuck.items()):
        if touch.ended and path not in keyed.trees:
            del keyed.stuck[path]  # a file's read returned: the next look reads it again
            keyed.moved.add(path)
    return sorted(keyed.stuck)


def _write_locked(keyed: Keyed, progress: Progress, lock_wait_s: float, timeout: float) -> None:
    from filelock import FileLock, Timeout

    lock = FileLock(keyed.index.lock_path)
    try:
        lock.acquire(timeout=lock_wait_s, poll_interval=0.05)
    except Timeout:
        raise TimeoutError(
            f"another process held the search index lock {lock.lock_file} for {int(lock_wait_s)} s"
        ) from None
    try:
        rows = keyed.index.load()  # what others committed while this process waited
        reads, removed = _differences(keyed, rows)
        _write(keyed, reads, removed, progress, timeout)
    finally:
        lock.release()


def _differences(keyed: Keyed, rows: dict[str, Stored]) -> tuple[list[str], list[str]]:
    """Paths to read (new, moved, named while racy, due to settle) and rows to drop."""
    if keyed.index.reloaded:
        keyed.compare_all = True
        keyed.index.reloaded = False
        keyed.unsettled = {
            path: _settles(row.fingerprint)
            for path, row in rows.items()
            if _racy(row.fingerprint, row.read_ns)
        }
    now = time.time_ns()
    candidates = set(keyed.moved) | keyed.named
    due = [path for path, when in keyed.unsettled.items() if when <= now]
    candidates.update(due[:SETTLE_PER_REFRESH])
    if keyed.compare_all:
        candidates.update(rows)
        for root, tree in keyed.trees.items():
            if root not in keyed.stuck:  # an abandoned look may still be changing it
                candidates.update(tree.files)
    reads: list[str] = []
    removed: list[str] = []
    for path in candidates:
        if path in keyed.stuck:
            continue  # its last read has not returned yet
        seen = _on_disk(keyed, path)
        row = rows.get(path)
        if seen is None:
            if row is not None and _settled_tree(keyed, path):
                removed.append(path)
        elif row is None or row.fingerprint != seen or _settling(keyed, path, now):
            reads.append(path)
    return sorted(reads), removed


def _settling(keyed: Keyed, path: str, now: int) -> bool:
    """A racy read to check again: a notice named the file, or its racy window has passed."""
    when = keyed.unsettled.get(path)
    return when is not None and (path in keyed.named or when <= now)


def _on_disk(keyed: Keyed, path: str) -> Fingerprint | None:
    for root, tree in keyed.trees.items():
        if root in keyed.stuck:
            continue
        seen = tree.files.get(path)
        if seen is not None:
            return seen
    return None


def _settled_tree(keyed: Keyed, path: str) -> bool:
    """Whether ``path``'s absence can be trusted: its tree was walked and is not stuck."""
    for root, tree in keyed.trees.items():
        if path.startswith(root.rstrip(os.sep) + os.sep):
            return tree.scanned and root not in keyed.stuck
    return True  # under no tree any more (a package removed): drop it


def _racy(fp: Fingerprint, read_ns: int) -> bool:
    return max(fp[2], fp[3]) >= read_ns - RACY_NS


def _settles(fp: Fingerprint) -> int:
    return max(fp[2], fp[3]) + RACY_NS


def _write(
    keyed: Keyed, reads: list[str], removed: list[str], progress: Progress, timeout: float
) -> None:
    index = keyed.index
    rows = index.rows
    total = len(reads)
    bulk = not rows and total >= BATCH_FILES  # a first build
    if bulk:
        index.lookups(present=False)
    batch: list[Update] = []
    first = True
    for done, (path, found) in enumerate(_prefetched(keyed, reads, timeout), start=1):
        if found is not None:
            batch.append(_update(keyed, path, found, rows.get(path)))
        if len(batch) >= BATCH_FILES:
            index.write(batch, removed if first else [], complete=False)
            first = False
            _settle(keyed, batch)
            batch = []
            progress(done, total)
    index.lookups(present=True)  # nothing to do unless a first build dropped them
    index.write(batch, removed if first else [], complete=True)
    _settle(keyed, batch)
    if total >= BATCH_FILES:
        index.optimize()
    if total:
        progress(total, total)
    for path in removed:
        keyed.unsettled.pop(path, None)
    keyed.moved.clear()
    keyed.named.clear()
    keyed.compare_all = False


class _Read:
    """One file as the prefetcher read it: its fingerprint just before, the read's start time,
    and the bytes."""

    __slots__ = ("data", "fingerprint", "read_ns")

    def __init__(self, fingerprint: Fingerprint, read_ns: int, data: bytes) -> None:
        self.fingerprint = fingerprint
        self.read_ns = read_ns
        self.data = data


def _update(keyed: Keyed, path: str, found: _Read, row: Stored | None) -> Update:
    sha = digest(found.data)
    tree = _tree_of(keyed, path)
    if row is not None and row.digest == sha:  # the same bytes: no scan
        return Update(path, tree, found.fingerprint, found.read_ns, sha, None)
    text = found.data.decode("utf-8", "replace")
    return Update(path, tree, found.fingerprint, found.read_ns, sha, declarations(text))


def _tree_of(keyed: Keyed, path: str) -> str:
    for root in keyed.trees:
        if path.startswith(root.rstrip(os.sep) + os.sep):
            return root
    return keyed.sources.root


def _settle(keyed: Keyed, written: list[Update]) -> None:
    for update in written:
        if _racy(update.fingerprint, update.read_ns):
            keyed.unsettled[update.path] = _settles(update.fingerprint)
        else:
            keyed.unsettled.pop(update.path, None)


def _prefetched(
    keyed: Keyed, paths: list[str], timeout: float
) -> Iterator[tuple[str, _Read | None]]:
    """``(path, read)`` for each path in order, read by a thread ahead of the caller; ``None``
    for a file that is gone, not a regular file or too large. A read that takes longer than
    ``timeout`` is given up on (its path goes to ``keyed.stuck``) and a new thread goes on."""
    start = 0
    while start < len(paths):
        reader = _Prefetcher(paths, start)
        try:
            while start < len(paths):
                try:
                    path, found = reader.items.get(timeout=timeout)
                except queue.Empty:
                    keyed.stuck[paths[start]] = reader.touch
                    start += 1
                    break
                start += 1
                yield path, found
        finally:  # done, given up on, or the caller stopped early: the thread stops
            reader.abandon()


class _Prefetcher:
    def __init__(self, paths: list[str], start: int) -> None:
        self.items: queue.Queue[tuple[str, _Read | None]] = queue.Queue(_PREFETCH)
        self._paths = paths
        self._abandoned = False
        self.touch = Touch(paths[start])
        threading.Thread(target=self._run, args=(start,), name="search-read", daemon=True).start()

    def abandon(self) -> None:
        self._abandoned = True

    def _run(self, start: int) -> None:
        try:
            for path in self._paths[start:]:
                if self._abandoned:
                    return
                self.touch.at(path)
                found = _read(path)
                while not self._abandoned:
                    try:
                        self.items.put((path, found), timeout=1.0)
                        break
                    except queue.Full:
                        continue
        finally:
            self.touch.ended = True


def _read(path: str) -> _Read | None:
    try:
        fp = fingerprint(os.stat(path))
        read_ns = time.time_ns()
        data = safe_read.read_regular(path, safe_read.SOURCE_CAP)
    except OSError:
        return None
    return _Read(fp, read_ns, data)
