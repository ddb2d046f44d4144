"""Reading a file a user or an agent named, without ever stalling the reader.

A named path may turn out to be a FIFO (open would wait for a writer, read for data), a
character device (``/dev/zero`` never ends), a huge file, or a file on a mount whose reads hang
(NFS, FUSE). Every read here opens with ``O_NONBLOCK``, refuses anything ``fstat`` does not call
a regular file, stops past a size cap, and - through `read_bounded` (threads) or `read_async`
(event loops) - gives up after a time bound, leaving a stuck read behind in a daemon thread.

Refusals are `RefusedRead`, an ``OSError`` with an ``errno`` and a ``strerror`` that name the
cap or the kind of file, so callers that already report ``OSError``s report these too.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anyio import CapacityLimiter
    from anyio.lowlevel import RunVar

MIB = 1 << 20
SOURCE_CAP = 16 * MIB  # a Lean source file
SMALL_CAP = 1 * MIB  # lean-toolchain, lake-manifest.json, lakefile.*
CONFIG_CAP = 16 * MIB  # an MCP client's configuration (~/.claude.json grows with history)
TIMEOUT_S = 10.0
_ASYNC_SLOTS = 8  # threads reads may hold; a stuck read keeps its slot until it ends

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class RefusedRead(OSError):
    """A read refused or abandoned: ``reason`` is notRegular, tooLarge or timeout."""

    def __init__(self, code: int, reason: str, message: str, path: str) -> None:
        super().__init__(code, message, path)
        self.reason = reason

    def __str__(self) -> str:  # callers name the path themselves
        return str(self.strerror)


def kind_of(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _cap_text(cap: int) -> str:
    return f"{cap // MIB} MiB" if cap >= MIB and cap % MIB == 0 else f"{cap} bytes"


def too_large(path: str, cap: int) -> RefusedRead:
    return RefusedRead(
        errno.EFBIG, "tooLarge", f"larger than the {_cap_text(cap)} cap for this file", path
    )


def read_regular(path: str, cap: int) -> bytes:
    """The bytes of the regular file `path`, at most `cap` of them; may block on a slow mount.

    Raises `RefusedRead` for anything but a regular file or for a file over `cap`, and the
    plain ``OSError`` of ``open`` otherwise (``FileNotFoundError``, ``PermissionError``...).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            reason = f"is {kind_of(info.st_mode)}, not a regular file"
            raise RefusedRead(errno.EINVAL, "notRegular", reason, path)
        if info.st_size > cap:
            raise too_large(path, cap)
        return _read_upto(fd, path, cap, info.st_size)
    finally:
        os.close(fd)


def _read_upto(fd: int, path: str, cap: int, size: int) -> bytes:
    chunks = [os.read(fd, min(size, cap) + 1)]  # one byte more than stat said: see it end
    total = len(chunks[0])
    while chunks[-1]:
        if total > cap:
            raise too_large(path, cap)
        chunk = os.read(fd, min(1 << 16, cap + 1 - total))
        total += len(chunk)
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 2 else b"".join(chunks)  # no copy of a whole read


def timed_out(path: str, seconds: float) -> RefusedRead:
    return RefusedRead(
        errno.ETIMEDOUT, "timeout", f"reading did not finish within {seconds:g} s", path
    )


def read_bounded(path: str, cap: int, timeout: float = TIMEOUT_S) -> bytes:
    """`read_regular` in a daemon thread, abandoned after `timeout` seconds (for sync callers)."""
    box: list[bytes | BaseException] = []

    def run() -> None:
        try:
            box.append(read_regular(path, cap))
        except BaseException as exc:  # handed to the caller's thread
            box.append(exc)

    thread = threading.Thread(target=run, name="bounded-read", daemon=True)
    thread.start()
    thread.join(timeout)
    if not box:
        raise timed_out(path, timeout)
    result = box[0]
    if isinstance(result, BaseException):
        raise result
    return result


def read_text_bounded(path: str, cap: int, timeout: float = TIMEOUT_S) -> str:
    """`read_bounded`, decoded as UTF-8 (``UnicodeDecodeError`` when it is not)."""
    return read_bounded(path, cap, timeout).decode("utf-8")


async def read_async(path: str, cap: int, timeout: float = TIMEOUT_S) -> bytes:
    """`read_regular` off the event loop, given up after `timeout` seconds.

    The read runs in a worker thread of a small limiter of its own, so reads stuck in the
    kernel never take the threads other work (stdout writes) needs; waiting for a free slot
    counts against the same `timeout`.
    """
    import anyio
    import anyio.to_thread

    try:
        with anyio.fail_after(timeout):
            return await anyio.to_thread.run_sync(
                partial(read_regular, path, cap), abandon_on_cancel=True, limiter=_slots()
            )
    except TimeoutError:
        raise timed_out(path, timeout) from None


def _slots() -> CapacityLimiter:
    """The read threads' limiter of the running event loop (one per ``anyio.run``)."""
    import anyio
    from anyio.lowlevel import RunVar

    global _SLOTS
    if _SLOTS is None:
        _SLOTS = RunVar("beam_safe_read_slots")
    try:
        return _SLOTS.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(_ASYNC_SLOTS)
        _SLOTS.set(limiter)
        return limiter


_SLOTS: RunVar[CapacityLimiter] | None = None
