"""Touching a file a user or an agent named (stat, open, read) without ever stalling the caller.

A named path may turn out to be a FIFO (open would wait for a writer, read for data), a
character device (``/dev/zero`` never ends), a huge file, or a file on a mount whose reads and
stats hang (NFS, FUSE). Every read here opens with ``O_NONBLOCK``, refuses anything ``fstat`` does
not call a regular file and stops past a size cap; through `read_bounded` / `call_bounded`
(threads) or `read_async` / `call_async` (event loops) it runs in a pool of daemon threads and is
given up after a time bound, leaving a stuck call behind in its thread.

Refusals are `RefusedRead`, an ``OSError`` with an ``errno`` and a ``strerror`` that name the
cap or the kind of file, so callers that already report ``OSError``s report these too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import queue
import stat
import threading
import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")

MIB = 1 << 20
SOURCE_CAP = 16 * MIB  # a Lean source file
SMALL_CAP = 1 * MIB  # lean-toolchain, lake-manifest.json, lakefile.*
CONFIG_CAP = 16 * MIB  # an MCP client's configuration (~/.claude.json grows with history)
TIMEOUT_VARIABLE = "BEAM_READ_TIMEOUT_S"  # overrides TIMEOUT_S (a positive number of seconds)


def _timeout_from_env(default: float) -> float:
    try:
        value = float(os.environ.get(TIMEOUT_VARIABLE, default))
    except ValueError:
        return default
    return value if 0 < value < float("inf") else default


TIMEOUT_S = _timeout_from_env(10.0)  # the bound on one read, read once at import

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class RefusedRead(OSError):
    """A read refused or abandoned: ``reason`` is notRegular, tooLarge, timeout or noThread."""

    def __init__(self, code: int, reason: str, message: str, path: str) -> None:
        super().__init__(code, message, path)
        self.reason = reason

    def __str__(self) -> str:  # callers name the path themselves
        return str(self.strerror)

    def __reduce__(self) -> tuple[type[RefusedRead], tuple[int, str, str, str]]:
        """Pickled whole (a reader process sends it back to its parent)."""
        return RefusedRead, (self.errno or 0, self.reason, str(self.strerror), str(self.filename))


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
    return read_regular_stat(path, cap)[0]


def read_regular_stat(path: str, cap: int) -> tuple[bytes, os.stat_result]:
    """`read_regular`, with the ``fstat`` of the very file that was read (to notice later
    whether it is still the same file)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            reason = f"is {kind_of(info.st_mode)}, not a regular file"
            raise RefusedRead(errno.EINVAL, "notRegular", reason, path)
        if info.st_size > cap:
            raise too_large(path, cap)
        return _read_upto(fd, path, cap, info.st_size), info
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


def timeout_details() -> dict[str, object]:
    """The ``data`` of the timeout tool error a read, stat or resolution that gave up becomes."""
    return {"phase": "read", "waited_ms": int(TIMEOUT_S * 1000), "reason": "timeout"}


def timed_out(path: str, seconds: float) -> RefusedRead:
    return RefusedRead(
        errno.ETIMEDOUT, "timeout", f"reading did not finish within {seconds:g} s", path
    )


class _Job(Generic[T]):
    """One call for the pool: its outcome, and ``wake`` to tell an event loop it is there."""

    def __init__(self, fn: Callable[[], T], wake: Callable[[], object]) -> None:
        self.fn = fn
        self.box: list[T | BaseException] = []
        self.wake = wake

    def run(self) -> None:
        try:
            self.box.append(self.fn())
        except BaseException as exc:  # handed to the waiting thread or task
            self.box.append(exc)

    def tell(self) -> None:
        with contextlib.suppress(Exception):  # the waiter or its loop may be gone
            self.wake()

    def result(self, path: str, timeout: float) -> T:
        if not self.box:
            raise timed_out(path, timeout)
        value = self.box[0]
        if isinstance(value, BaseException):
            raise value
        return value


class _Pool:
    """Daemon threads for calls that may hang in the kernel, started as needed and reused.

    Daemon threads, never the event loop's worker threads: a call stuck on a hung mount is
    abandoned, never joined, so it holds up neither other work nor the process's exit. Threads
    that are stuck count against `MAX_THREADS`; past it a call is refused at once.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job[Any]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads = 0

    def submit(self, job: _Job[Any], path: str) -> None:
        with self._lock:
            spawn = self._idle == 0
            if spawn and self._threads >= MAX_THREADS:
                raise RefusedRead(
                    errno.EAGAIN,
                    "timeout",
                    f"{MAX_THREADS} earlier reads of named files still hang (a stuck mount?)",
                    path,
                )
            if spawn:
                self._threads += 1
            else:
                self._idle -= 1
        if spawn:
            try:
                threading.Thread(target=self._work, name="bounded-io", daemon=True).start()
            except BaseException as exc:  # no thread (resources exhausted)
                with self._lock:
                    self._threads -= 1
                if isinstance(exc, RuntimeError):  # "can't start new thread": an OSError here
                    raise RefusedRead(
                        errno.EAGAIN, "noThread", f"no thread to read it in ({exc})", path
                    ) from None
                raise
        self._jobs.put(job)

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            job.run()
            with self._lock:  # idle before the waiter hears: its next call reuses this thread
                self._idle += 1
            job.tell()


MAX_THREADS = 64  # calls that may hang at once
_POOL = _Pool()


def call_bounded(fn: Callable[[], T], path: str, timeout: float = TIMEOUT_S) -> T:
    """``fn()`` (which touches ``path``) in a pool thread, abandoned after ``timeout`` seconds
    with a `RefusedRead` ``timeout``; for synchronous callers."""
    done = threading.Event()
    job = _Job(fn, done.set)
    _POOL.submit(job, path)
    done.wait(timeout)
    return job.result(path, timeout)


class Prelude:
    """A check that rides along with the next bounded call of the task that armed it.

    A trip to a pool thread and back costs about 100 µs, a ``stat`` about 7: a caller that
    must check a path it remembered (the server's canonical workspace roots) arms a prelude for
    a block (``with prelude:``), and the first `call_async` its task makes there runs the check
    first, in the same thread trip. A check that raises ends that call with its exception
    (``failure`` keeps it, in case the code that made the call catches it); one that no call
    took is still ``pending`` after the block, and the caller runs it by itself.
    """

    __slots__ = ("_token", "check", "failure", "task")

    def __init__(self, check: Callable[[], None]) -> None:
        self.check: Callable[[], None] | None = check
        self.failure: BaseException | None = None
        self.task: object = None

    @property
    def pending(self) -> bool:
        return self.check is not None

    def take(self) -> Callable[[], None] | None:
        check, self.check = self.check, None
        return check

    def __enter__(self) -> Prelude:
        import asyncio

        self.task = asyncio.current_task()
        self._token = _PRELUDE.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _PRELUDE.reset(self._token)

    def _then(self, check: Callable[[], None], fn: Callable[[], T]) -> T:
        try:
            check()
        except BaseException as exc:
            self.failure = exc
            raise
        return fn()


_PRELUDE: ContextVar[Prelude | None] = ContextVar("beam_read_prelude", default=None)


async def call_async(fn: Callable[[], T], path: str, timeout: float = TIMEOUT_S) -> T:
    """`call_bounded` for the server's asyncio loop (anyio runs on asyncio here, as the rest of
    the server assumes): the pool thread completes a future through ``call_soon_threadsafe``,
    about 20 µs a call. An armed `Prelude` of the calling task runs first, in the same trip."""
    import asyncio

    prelude = _PRELUDE.get()
    # Only the task that armed it: a task the caller started runs on a copy of its context.
    if prelude is not None and prelude.check is not None and prelude.task is asyncio.current_task():
        fn = partial(prelude._then, prelude.take(), fn)  # type: ignore[arg-type]
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()
    job = _Job(fn, partial(loop.call_soon_threadsafe, _settle, future))
    _POOL.submit(job, path)
    timer = loop.call_later(timeout, _settle, future)  # cheaper than a cancel scope
    try:
        await future
    finally:
        timer.cancel()
    return job.result(path, timeout)


async def settle(path: str, timeout: float = TIMEOUT_S) -> None:
    """The calling task's armed `Prelude` now, in a trip of its own, when no bounded call took
    it yet: for work that touches no named file but must not start before the check."""
    prelude = _PRELUDE.get()
    if prelude is not None and prelude.check is not None:
        await call_async(_nothing, path, timeout)


def _nothing() -> None:
    return None


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():  # not given up on (a timeout or a cancellation cancels it)
        future.set_result(None)


def call_all_bounded(
    calls: Sequence[tuple[Callable[[], T], str]], timeout: float = TIMEOUT_S
) -> list[T | RefusedRead]:
    """Each ``fn()`` of `calls` (``(fn, path)`` pairs) at once in pool threads, all given up
    `timeout` seconds after the first started: a call that did not finish by then, or found no
    thread, is its `RefusedRead` in the result; any other exception of a call is raised."""
    deadline = time.monotonic() + timeout
    started: list[tuple[_Job[T], threading.Event, str] | RefusedRead] = []
    for fn, path in calls:
        done = threading.Event()
        job = _Job(fn, done.set)
        try:
            _POOL.submit(job, path)
        except RefusedRead as refused:
            started.append(refused)
            continue
        started.append((job, done, path))
    outcomes: list[T | RefusedRead] = []
    for item in started:
        if isinstance(item, RefusedRead):
            outcomes.append(item)
            continue
        job, done, path = item
        done.wait(max(0.0, deadline - time.monotonic()))
        try:
            outcomes.append(job.result(path, timeout))
        except RefusedRead as refused:
            if refused.reason != "timeout" or job.box:
                raise
            outcomes.append(refused)
    return outcomes


def read_bounded(path: str, cap: int, timeout: float = TIMEOUT_S) -> bytes:
    """`read_regular` off this thread, abandoned after `timeout` seconds (for sync callers)."""
    return call_bounded(partial(read_regular, path, cap), path, timeout)


def read_text_bounded(path: str, cap: int, timeout: float = TIMEOUT_S) -> str:
    """`read_bounded`, decoded as UTF-8 (``UnicodeDecodeError`` when it is not)."""
    return read_bounded(path, cap, timeout).decode("utf-8")


async def read_async(path: str, cap: int, timeout: float = TIMEOUT_S) -> bytes:
    """`read_regular` off the event loop, given up after `timeout` seconds."""
    return await call_async(partial(read_regular, path, cap), path, timeout)
