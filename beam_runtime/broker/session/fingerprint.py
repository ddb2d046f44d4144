"""Whether a named source file must be read again: its stat fingerprint, guarded for racy times.

A file whose (device, inode, size, mtime_ns, ctime_ns) did not change since it was last read is
taken as unchanged, so a call on an unchanged file costs one ``stat`` instead of a read, a UTF-8
check and a comparison with the text Lean holds. A timestamp only moves in steps of the
filesystem's granularity, so a file modified within that window of its read could change again
without its fingerprint moving; such an entry is "racy" (git's term for the same problem) and is
read again on every use until its modification time is safely in the past. The SHA-256 of a
read is computed only when something asks for it: change detection compares bytes.

A reader is handed the bytes of the file's last read (or None): it may check the new bytes
against them, and tell which bytes the two share at the start and at the end (a `Span`, kept
with the snapshot so that the edit sent to Lean needs no second comparison).
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

from beam_runtime import safe_read
from beam_runtime.broker.session.versions import content_digest

Fingerprint = tuple[int, int, int, int, int]
Span = tuple[int, int]  # bytes shared with an earlier read: at the start, at the end
Reader = Callable[[bytes | None], tuple[bytes, Span | None]]  # (last read) -> (bytes, span)

# Coarser than any local filesystem's timestamps (FAT keeps 2 s) and the kernel's coarse clock.
RACY_WINDOW_NS = 2_000_000_000
MAX_ENTRIES = 256
MAX_BYTES = 64 << 20


def fingerprint(st: os.stat_result) -> Fingerprint:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class Snapshot(NamedTuple):  # a NamedTuple is ten times cheaper to define than a dataclass
    """One read of a file: its bytes (checked by the reader) and its fingerprint."""

    data: bytes
    stamp: Fingerprint
    read_ns: int  # wall clock just before the read
    base: bytes | None = None  # the earlier read `span` compares with
    span: Span | None = None

    @property
    def digest(self) -> str:
        """SHA-256 of the bytes, computed when asked for (comparing bytes is cheaper)."""
        return content_digest(self.data)

    def racy(self, window_ns: int) -> bool:
        """Modified so close to the read that a later change may keep the same fingerprint."""
        changed_ns = max(self.stamp[3], self.stamp[4])
        return changed_ns >= self.read_ns - window_ns


class Probe(NamedTuple):
    """What one look at a file found: its stat, and its bytes unless the last read still holds."""

    st: os.stat_result | None
    verdict: str  # "hit", "racy" (same fingerprint, changed too recently) or "miss"
    data: bytes | None
    read_ns: int
    base: bytes | None = None
    span: Span | None = None


def _probe(
    path: str,
    entry: Snapshot | None,
    window_ns: int,
    reader: Reader,
    before: Callable[[], None] | None = None,
) -> Probe:
    """``stat`` the file and read it unless ``entry`` still holds (runs in any thread)."""
    if before is not None:
        before()
    try:
        st: os.stat_result | None = os.stat(path)
    except OSError:
        st = None  # the reader raises the error the caller reports
    verdict = "miss"
    if entry is not None and st is not None and fingerprint(st) == entry.stamp:
        verdict = "racy" if entry.racy(window_ns) else "hit"
        if verdict == "hit":
            return Probe(st, verdict, None, 0)
    read_ns = time.time_ns()  # before the read: a change during it moves the fingerprint
    base = entry.data if entry is not None else None
    data, span = reader(base)
    return Probe(st, verdict, data, read_ns, base, span)


class ReadCounts:
    """How often a named file was actually read, against how often its fingerprint sufficed."""

    def __init__(self) -> None:
        self.reads = 0
        self.racy_reads = 0
        self.hits = 0


class SourceCache:
    """The last read of each named file, reused while its fingerprint holds (bounded, LRU)."""

    def __init__(self, window_ns: int = RACY_WINDOW_NS) -> None:
        self.window_ns = window_ns
        self.counts = ReadCounts()
        self._entries: OrderedDict[str, Snapshot] = OrderedDict()
        self._bytes = 0

    def read(self, path: str, reader: Reader) -> Snapshot:
        """The file's snapshot; ``reader`` (which raises on unreadable or bad bytes) on a miss."""
        entry = self._entries.get(path)
        return self._settle(path, entry, _probe(path, entry, self.window_ns, reader))

    async def aread(
        self,
        path: str,
        reader: Reader,
        before: Callable[[], None] | None = None,
    ) -> Snapshot:
        """`read` with the ``stat`` and the read in one bounded call off the event loop: both
        hang on a stuck mount. A call that does not finish in time raises `RefusedRead`.
        ``before`` runs first in the same call (a check that may raise, such as re-resolving
        the name the file was found by)."""
        entry = self._entries.get(path)
        probe = partial(_probe, path, entry, self.window_ns, reader, before)
        return self._settle(path, entry, await safe_read.call_async(probe, path))

    def _settle(self, path: str, entry: Snapshot | None, probe: Probe) -> Snapshot:
        """Count the probe and keep what it read (the event loop's side: no I/O here)."""
        if probe.verdict == "racy":
            self.counts.racy_reads += 1
        if probe.data is None:
            assert entry is not None  # a hit is a hit on the entry the probe was given
            self.counts.hits += 1
            if self._entries.get(path) is entry:
                self._entries.move_to_end(path)
            return entry
        if probe.st is None:
            self._forget(path)
        return self._store(path, probe)

    def _store(self, path: str, probe: Probe) -> Snapshot:
        old = self._entries.get(path)
        self._forget(path)
        self.counts.reads += 1
        st, data, base, span = probe.st, probe.data, probe.base, probe.span
        assert data is not None  # a miss or a racy read: the probe read the file
        stamp = fingerprint(st) if st is not None else (-1, -1, -1, -1, -1)
        if old is not None and _same(old.data, data, base, span):
            data = old.data  # the same bytes: keep one copy (and identity makes compares free)
            base, span = data, (len(data), 0)
        snapshot = Snapshot(data, stamp, probe.read_ns, base, span)
        if st is not None:
            self._remember(path, snapshot)
        return snapshot

    def _remember(self, path: str, snapshot: Snapshot) -> None:
        if snapshot.base is not None and snapshot.base is not snapshot.data:
            snapshot = snapshot._replace(base=None, span=None)  # keep no old copy alive
        self._entries[path] = snapshot
        self._bytes += len(snapshot.data)
        while self._entries and (len(self._entries) > MAX_ENTRIES or self._bytes > MAX_BYTES):
            _, old = self._entries.popitem(last=False)
            self._bytes -= len(old.data)

    def _forget(self, path: str) -> None:
        old = self._entries.pop(path, None)
        if old is not None:
            self._bytes -= len(old.data)


def _same(old: bytes, new: bytes, base: bytes | None, span: Span | None) -> bool:
    """Whether two reads hold the same bytes; the reader's span decides without a compare."""
    if span is not None and base is old:
        return len(old) == len(new) == span[0]
    return old == new
