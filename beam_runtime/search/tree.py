"""The ``.lean`` files of one source tree, kept current at a cost in proportion to what changed.

A `Tree` remembers every directory (its fingerprint, when it was listed, its ``.lean`` files and
subdirectories) and every file's fingerprint: inode, size, modification and change times. A
`check` then looks again only where something may have changed:

- a directory with an inotify watch (`beam_runtime.search.watch`) is listed again when a notice
  says its entries changed, and its files are stat'ed when a notice names them;
- a look (``look=True``) also stats every directory: a new fingerprint (adding, removing or
  renaming an entry changes a directory's times) lists it again, which also covers changes no
  notice reports (a network file system changed by another machine);
- a directory without a watch listed within `RACY_NS` of its last change is listed again until
  it is older than that: a change within the same timestamp tick would not move its fingerprint
  (a watch, added before the listing, reports such a change);
- listing a directory stats each of its files (an editor may have replaced one by a rename);
- a look also stats the next `ROLLING` files in turn, so an in-place edit that no notice
  reported and no directory reflects is still found within ``files / ROLLING`` looks.

`check` answers the paths whose fingerprint moved, appeared or vanished, and the paths a notice
named (their content may have changed within one tick; the index compares bytes for those).
Every method touches the file system: callers run them off the event loop, bounded.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field

from beam_runtime.search.watch import Notices, Watcher

Fingerprint = tuple[int, int, int, int]  # inode, size, mtime_ns, ctime_ns

RACY_NS = 2_000_000_000  # coarser than any local file system's timestamps (FAT keeps 2 s)
ROLLING = 200  # files re-stat'ed by every check, in turn
SKIPPED_DIRS = frozenset({".lake", "lake-packages", "build", "node_modules"})


def fingerprint(info: os.stat_result) -> Fingerprint:
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


@dataclass
class _Dir:
    fingerprint: Fingerprint
    listed_ns: int  # wall clock just before the listing
    files: set[str] = field(default_factory=set)  # paths of its .lean files
    subdirs: set[str] = field(default_factory=set)  # paths of its subdirectories
    wd: int | None = None

    def racy(self) -> bool:
        return max(self.fingerprint[2], self.fingerprint[3]) >= self.listed_ns - RACY_NS


@dataclass
class Changes:
    """What a check found: ``moved`` paths (new, changed or gone: compare fingerprints) and
    ``named`` paths (a notice named them; their fingerprint may not show it)."""

    moved: set[str] = field(default_factory=set)
    named: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.moved or self.named)


class Tree:
    """One tree's directories and ``.lean`` files as last seen."""

    def __init__(self, root: str, watcher: Watcher | None) -> None:
        self.root = root
        self.files: dict[str, Fingerprint] = {}
        self._dirs: dict[str, _Dir] = {}
        self._by_wd: dict[int, str] = {}
        self._watcher = watcher
        self._cursor = 0
        self._order: list[str] = []
        self.scanned = False

    # ------------------------------------------------------------ checks

    def scan(self) -> Changes:
        """Walk the whole tree (the first look, or after lost notices); what differs from
        before."""
        before = self.files
        self.files = {}
        old_dirs, self._dirs = self._dirs, {}
        self._by_wd = {}
        self._order = []
        self._walk(self.root)
        if self._watcher is not None:
            for old in old_dirs.values():
                if old.wd is not None and old.wd not in self._by_wd:
                    self._watcher.remove(old.wd)
        self.scanned = True
        moved = {path for path, fp in self.files.items() if before.get(path) != fp}
        moved |= before.keys() - self.files.keys()
        return Changes(moved)

    @property
    def watched(self) -> bool:
        """Every directory has a watch: what a look would find, a notice reports first."""
        return self.scanned and len(self._by_wd) == len(self._dirs)

    def concerns(self, notices: Notices) -> bool:
        """Whether ``notices`` say anything about this tree."""
        return notices.overflowed or any(
            wd in self._by_wd for wd in (*notices.listing, *notices.content)
        )

    def check(self, notices: Notices, look: bool = True) -> Changes:
        """Look again where something may have changed (see the module docstring); without
        ``look`` only where ``notices`` say so."""
        if not self.scanned or notices.overflowed:
            return self.scan()
        changes = Changes()
        relist: set[str] = set()
        for wd in notices.listing:
            directory = self._by_wd.get(wd)
            if directory is not None:
                relist.add(directory)
        for wd, names in notices.content.items():
            directory = self._by_wd.get(wd)
            if directory is not None:
                for name in names:
                    path = os.path.join(directory, name)
                    if path in self.files:
                        changes.named.add(path)
        if look:
            for path, entry in list(self._dirs.items()):
                if (entry.wd is None and entry.racy()) or self._stat_moved(path, entry):
                    relist.add(path)
        for directory in sorted(relist, key=len):  # parents first: a gone parent drops its
            if directory in self._dirs:  # children before they are listed
                self._relist(directory, changes)
        for path in changes.named:
            self._restat(path, changes)
        if look:
            self._rolling(changes)
        return changes

    def forget(self) -> None:
        """Drop the watches (the tree is no longer searched)."""
        if self._watcher is not None:
            for wd in self._by_wd:
                self._watcher.remove(wd)
        self._by_wd.clear()

    # ------------------------------------------------------------ directories

    def _walk(self, top: str) -> None:
        stack = [top]
        while stack:
            directory = stack.pop()
            entry = self._list(directory)
            if entry is None:
                continue
            self._dirs[directory] = entry
            stack.extend(entry.subdirs)

    def _list(self, directory: str) -> _Dir | None:
        """List ``directory`` (watch first, so a change during the listing is noticed)."""
        wd = self._watcher.add(directory) if self._watcher is not None else None
        listed_ns = time.time_ns()
        try:
            info = os.stat(directory)
            found = list(os.scandir(directory))
        except OSError:
            if wd is not None and self._watcher is not None:
                self._watcher.remove(wd)
            return None
        entry = _Dir(fingerprint(info), listed_ns, wd=wd)
        if wd is not None:
            self._by_wd[wd] = directory
        for item in found:
            name = item.name
            if name.startswith("."):
                continue
            try:
                if item.is_dir(follow_symlinks=False):
                    if name not in SKIPPED_DIRS:
                        entry.subdirs.add(item.path)
                elif name.endswith(".lean"):
                    st = os.stat(item.path)
                    if stat.S_ISREG(st.st_mode):
                        entry.files.add(item.path)
                        self._see(item.path, fingerprint(st))
            except OSError:
                continue
        return entry

    def _relist(self, directory: str, changes: Changes) -> None:
        old = self._dirs.pop(directory)
        if old.wd is not None:
            self._by_wd.pop(old.wd, None)
        before = {path: self.files.get(path) for path in old.files}
        for path in old.files:
            self.files.pop(path, None)
        entry = self._list(directory)
        if entry is None:  # gone: so is everything below it
            changes.moved.update(before)
            for sub in old.subdirs:
                self._drop(sub, changes)
            self._unwatch(old.wd)
            return
        self._dirs[directory] = entry
        for path in old.files | entry.files:
            if before.get(path) != self.files.get(path):
                changes.moved.add(path)
        for sub in old.subdirs - entry.subdirs:
            self._drop(sub, changes)
        for sub in entry.subdirs:
            known = self._dirs.get(sub)
            if known is None:
                self._adopt(sub, changes)
            elif self._stat_moved(sub, known, inode_only=True):  # another directory now
                self._drop(sub, changes)
                self._adopt(sub, changes)

    def _adopt(self, top: str, changes: Changes) -> None:
        """A directory new to the tree: everything below it is new."""
        before = set(self.files)
        self._walk(top)
        changes.moved.update(self.files.keys() - before)

    def _drop(self, top: str, changes: Changes) -> None:
        prefix = top + os.sep
        for directory in [d for d in self._dirs if d == top or d.startswith(prefix)]:
            entry = self._dirs.pop(directory)
            for path in entry.files:
                if self.files.pop(path, None) is not None:
                    changes.moved.add(path)
            if entry.wd is not None and self._by_wd.get(entry.wd) == directory:
                del self._by_wd[entry.wd]
                self._unwatch(entry.wd)

    def _unwatch(self, wd: int | None) -> None:
        if wd is not None and self._watcher is not None and wd not in self._by_wd:
            self._watcher.remove(wd)

    def _stat_moved(self, path: str, entry: _Dir, inode_only: bool = False) -> bool:
        try:
            now = fingerprint(os.stat(path))
        except OSError:
            return True
        return now[0] != entry.fingerprint[0] if inode_only else now != entry.fingerprint

    # ------------------------------------------------------------ files

    def _see(self, path: str, fp: Fingerprint) -> None:
        if path not in self.files:
            self._order.append(path)
        self.files[path] = fp

    def _restat(self, path: str, changes: Changes) -> None:
        old = self.files.get(path)
        if old is None:
            return
        try:
            st = os.stat(path)
        except OSError:
            return  # its directory's notice or fingerprint reports the removal
        now = fingerprint(st)
        if now != old:
            self.files[path] = now
            changes.moved.add(path)

    def _rolling(self, changes: Changes) -> None:
        """Stat the next `ROLLING` files in turn (paths dropped since are skipped)."""
        order = self._order
        if len(order) > 2 * len(self.files) + ROLLING:  # compact the turn's list now and then
            order[:] = [path for path in order if path in self.files]
            self._cursor = 0
        count = min(ROLLING, len(order))
        for _ in range(count):
            if self._cursor >= len(order):
                self._cursor = 0
            path = order[self._cursor]
            self._cursor += 1
            if path in self.files:
                self._restat(path, changes)
