"""Change notices for the directories of source trees, from Linux inotify (through ctypes).

One inotify descriptor per process, non-blocking. A watch on a directory reports entries
created, deleted, moved in or out, written and having their attributes changed, and the
directory's own deletion or move. `drain` reads what is queued without waiting: one ``read``
system call when nothing happened, which is what lets an unchanged search skip every ``stat``.

Where inotify is missing (other systems, no free instance) or a watch cannot be added (the
per-user watch limit) `add` answers ``None`` and the caller falls back to looking at the
directory itself. A queue overflow is reported as ``overflowed`` and means "anything may have
changed". Nothing here blocks on a file system except `add`, which resolves a path (callers
run it off the event loop, bounded, like every other touch of a source tree).
``LEAN_BEAM_SEARCH_WATCH=0`` turns watching off.
"""

from __future__ import annotations

import os
import struct
import threading
from dataclasses import dataclass, field

_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = 0o2000000

CONTENT = _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE  # a file's bytes or stat changed
LISTING = _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE  # the directory's entries
GONE = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED  # the watched directory itself
_MASK = CONTENT | LISTING | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR | _IN_DONT_FOLLOW
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len
SWITCH = "LEAN_BEAM_SEARCH_WATCH"
MAX_WATCHES = 4096  # per process: inotify watches are a per-user limit other programs need


@dataclass
class Notices:
    """What `drain` found: per watch descriptor, the names whose content changed and whether
    its listing changed (or the directory went away); ``overflowed`` when events were lost."""

    content: dict[int, set[str]] = field(default_factory=dict)
    listing: set[int] = field(default_factory=set)
    overflowed: bool = False

    def __bool__(self) -> bool:
        return bool(self.content or self.listing or self.overflowed)


class Watcher:
    """The process's inotify descriptor; every method may be called from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._failed = os.environ.get(SWITCH, "1") == "0"
        self._libc: object | None = None
        self._wds: set[int] = set()

    @property
    def enabled(self) -> bool:
        return self._started() is not None

    def add(self, directory: str) -> int | None:
        """A watch descriptor for ``directory`` (the same one again for a directory already
        watched, under whatever name), or ``None`` when it cannot be watched."""
        fd = self._started()
        if fd is None or len(self._wds) >= MAX_WATCHES:
            return None
        libc = self._libc
        assert libc is not None
        wd = int(libc.inotify_add_watch(fd, os.fsencode(directory), _MASK))  # type: ignore[attr-defined]
        if wd < 0:  # out of watches (ENOSPC), vanished, not a directory, no permission:
            return None  # the caller looks at the directory itself
        self._wds.add(wd)  # the same wd again for a directory already watched
        return wd

    def remove(self, wd: int) -> None:
        fd = self._started()
        if fd is not None and self._libc is not None and wd in self._wds:
            self._wds.discard(wd)
            self._libc.inotify_rm_watch(fd, wd)  # type: ignore[attr-defined]

    def drain(self) -> Notices:
        """Every notice queued so far, without waiting."""
        notices = Notices()
        fd = self._started()
        if fd is None:
            return notices
        while True:
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                return notices
            except OSError:
                notices.overflowed = True
                return notices
            if not data:
                return notices
            _parse(data, notices, self._wds)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self._failed = True

    def _started(self) -> int | None:
        if self._fd is not None or self._failed:
            return self._fd
        with self._lock:
            if self._fd is None and not self._failed:
                self._fd = self._open()
                self._failed = self._fd is None
        return self._fd

    def _open(self) -> int | None:
        if not hasattr(os, "uname") or os.uname().sysname != "Linux":
            return None
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            fd = int(libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC))
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        self._libc = libc
        return fd


def _parse(data: bytes, notices: Notices, watched: set[int]) -> None:
    offset, size = 0, len(data)
    while offset + _HEADER.size <= size:
        wd, mask, _, length = _HEADER.unpack_from(data, offset)
        start = offset + _HEADER.size
        name = data[start : start + length].rstrip(b"\0")
        offset = start + length
        if mask & _IN_IGNORED:  # the kernel dropped the watch (its directory is gone)
            watched.discard(wd)
        if mask & _IN_Q_OVERFLOW:
            notices.overflowed = True
        elif mask & (LISTING | GONE):
            notices.listing.add(wd)
        elif mask & CONTENT and name:
            notices.content.setdefault(wd, set()).add(os.fsdecode(name))
