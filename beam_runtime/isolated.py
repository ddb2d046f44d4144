"""File-system work a command can walk away from: tasks run in a forked child process.

A read or stat on a hung mount (NFS, FUSE) may wait in the kernel beyond the reach of any
signal, SIGKILL included, once the request is in the file server's hands. A thread stuck there
keeps its whole process from exiting, so a command that read through a thread would print its
answer and then never end. Commands (`runtime list`, `prune`, `doctor`, `setup`, `remove`,
`uninstall`) therefore touch client configs and the projects they list through `run_tasks`:
the tasks run one after another in a forked child that first closes every descriptor it
inherited except its own pipe (a stuck child must hold no lock, lease or output pipe of the
command) and sends each task's outcome back pickled. When no task finishes within the bound,
the task in progress is reported as `Hung`, together with the other pending tasks of its group
(a directory that does not answer would hang each of them in turn); that child is killed and
abandoned (it goes once the mount answers) and a new child takes the tasks left.

Tasks must be picklable in their results (or raise a picklable exception) and must not need
anything the child would have to import late or lock (they run right after `fork`). Where
`fork` does not exist, the tasks run in bounded threads (`safe_read.call_all_bounded`) instead.
The MCP server, a long-lived process with an event loop, keeps using the bounded threads.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from beam_runtime import safe_read

T = TypeVar("T")
_HEADER = struct.Struct("!I")


@dataclass(frozen=True)
class Hung:
    """A task that did not finish within `seconds`: `culprit` is the task that hung (its own
    index, or another task of the same group that hung first)."""

    culprit: int
    seconds: float


Outcome = Any  # the task's value, the exception it raised, or Hung


def run_tasks(
    tasks: Sequence[Callable[[], Any]],
    groups: Sequence[str] | None = None,
    timeout: float | None = None,
) -> list[Outcome]:
    """Each task's value, the exception it raised, or `Hung`, in task order."""
    bound = safe_read.TIMEOUT_S if timeout is None else timeout
    if not tasks:
        return []
    if not hasattr(os, "fork"):
        return _in_threads(tasks, bound)
    keys = list(groups) if groups is not None else [str(i) for i in range(len(tasks))]
    outcomes: list[Outcome] = [None] * len(tasks)
    pending = list(range(len(tasks)))
    while pending:
        pending = _one_child(tasks, pending, keys, outcomes, bound)
    return outcomes


def _in_threads(tasks: Sequence[Callable[[], Any]], bound: float) -> list[Outcome]:
    def guarded(task: Callable[[], Any]) -> Callable[[], tuple[Any]]:
        def run() -> tuple[Any]:
            try:
                return (task(),)
            except Exception as exc:  # handed back as the outcome, like the child does
                return (exc,)

        return run

    calls = [(guarded(task), str(index)) for index, task in enumerate(tasks)]
    found = safe_read.call_all_bounded(calls, bound)
    return [
        Hung(index, bound) if isinstance(item, safe_read.RefusedRead) else item[0]
        for index, item in enumerate(found)
    ]


def _one_child(
    tasks: Sequence[Callable[[], Any]],
    pending: list[int],
    keys: list[str],
    outcomes: list[Outcome],
    bound: float,
) -> list[int]:
    """Run `pending` in one child; returns the tasks still to run (after a hang)."""
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no process left to start: bounded threads it is
        os.close(read_fd)
        os.close(write_fd)
        fallback = _in_threads([tasks[i] for i in pending], bound)
        for index, outcome in zip(pending, fallback, strict=True):
            outcomes[index] = outcome
        return []
    if pid == 0:  # the child: never returns
        os.close(read_fd)
        _child(tasks, pending, write_fd)
    os.close(write_fd)
    left = set(pending)
    current: int | None = None
    frames = _Frames(read_fd)
    last = time.monotonic()
    try:
        while left:
            frame, closed = frames.next(last + bound)
            if frame is None:
                culprit = current if current is not None else min(left)
                if closed:  # the child died without a word (out of memory, killed)
                    outcomes[culprit] = OSError(f"the reader process ended reading task {culprit}")
                    left.discard(culprit)
                    return sorted(left)
                _abandon(pid)
                pid = 0
                for index in sorted(left):
                    if keys[index] == keys[culprit]:
                        outcomes[index] = Hung(culprit, bound)
                        left.discard(index)
                return sorted(left)
            kind, index, payload = frame
            last = time.monotonic()
            if kind == "start":
                current = index
            else:
                outcomes[index] = payload
                left.discard(index)
                current = None
        return []
    finally:
        os.close(read_fd)
        if pid:
            _reap(pid)


def _child(tasks: Sequence[Callable[[], Any]], pending: list[int], write_fd: int) -> None:
    try:
        _isolate(write_fd)
        for index in pending:
            _send(write_fd, ("start", index, None))
            try:
                payload: Any = tasks[index]()
            except BaseException as exc:
                payload = exc
            try:
                _send(write_fd, ("done", index, payload))
            except MemoryError:
                payload = None
                _send(write_fd, ("done", index, MemoryError()))
            except Exception as exc:  # an outcome that does not pickle
                kind = type(payload).__name__
                failed = RuntimeError(f"its outcome ({kind}) could not be sent back: {exc}")
                _send(write_fd, ("done", index, failed))
    finally:
        os._exit(0)


def _isolate(keep: int) -> None:
    """Hold nothing of the parent's: no lock, lease or pipe stays open in a stuck child."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, keep)
    os.closerange(keep + 1, _max_fd())
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _max_fd() -> int:
    try:
        return max(os.sysconf("SC_OPEN_MAX"), 256)
    except (ValueError, OSError):
        return 4096


def _send(fd: int, message: tuple[str, int, Any]) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


class _Frames:
    """The child's messages, read off the pipe by the chunk and taken from the chunk in place
    (tens of thousands of small frames: no copy of the rest of the chunk per frame)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.pos = 0

    def next(self, deadline: float) -> tuple[Any, bool]:
        """(message or None, whether the pipe closed)."""
        while True:
            start = self.pos + _HEADER.size
            if len(self.buffer) >= start:
                (size,) = _HEADER.unpack_from(self.buffer, self.pos)
                if len(self.buffer) >= start + size:
                    self.pos = start + size
                    return pickle.loads(self.buffer[start : self.pos]), False
            wait = deadline - time.monotonic()
            if wait <= 0:
                return None, False
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                return None, False
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None, True
            del self.buffer[: self.pos]
            self.pos = 0
            self.buffer += chunk


def _abandon(pid: int) -> None:
    """Kill a child stuck in the kernel; it is never waited for (it may never die while its
    mount hangs), so the command can end. Whoever inherits it reaps it."""
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.waitpid(pid, os.WNOHANG)


def _reap(pid: int) -> None:
    """Wait for a child that sent its last answer (it exits right after; bounded anyway)."""
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        try:
            done, _status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done:
            return
        time.sleep(0.001)
    _abandon(pid)
