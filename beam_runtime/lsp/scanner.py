"""One process-tree scan for every Lean server this process runs: who descends from each.

Lean's file workers call ``setsid``, so a server's descendants are remembered while it runs, to be
killed with it (``process.kill_tree``). Instead of one scan per server, one thread per process
reads ``/proc`` once per tick (every process's parent and start time, stdlib only) and updates
the known descendants of every registered server. The interval doubles while no tree grows, up
to ``TRACK_INTERVAL_MAX_S``, and falls back to the shortest registered interval when a tree grows
or a server registers. With no server registered the thread ends: an idle process pays nothing.
A descendant is remembered by pid and start time, so a reused pid is never mistaken for it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from beam_runtime.lsp.process import ServerProcess

TRACK_INTERVAL_MAX_S = 8.0

Table = dict[int, tuple[int, int]]  # pid -> (parent pid, start time in clock ticks)


class Descendant(NamedTuple):
    pid: int
    start: int  # clock ticks after boot (field 22 of /proc/<pid>/stat)


def _stat(pid: int | str) -> tuple[int, int] | None:
    """(parent pid, start ticks) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2 :].split()  # after the command, which may hold anything
    return int(fields[1]), int(fields[19])


def start_ticks(pid: int) -> int | None:
    found = _stat(pid)
    return None if found is None else found[1]


def read_table() -> Table:
    """Every process on the machine: one read of ``/proc``."""
    table: Table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            found = _stat(name)
            if found is not None:
                table[int(name)] = found
    return table


def update(procs: Iterable[ServerProcess], table: Table) -> list[bool]:
    """Each server's known descendants from one table; per server, whether one is new.

    Descendants that ended are forgotten; one that left the tree but still runs (an orphan)
    stays remembered.
    """
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    grew = []
    for proc in procs:
        current: set[Descendant] = set()
        stack = [proc.pid]
        while stack:
            for child in children.get(stack.pop(), ()):
                current.add(Descendant(child, table[child][1]))
                stack.append(child)
        grew.append(bool(current - proc.known))
        alive = {d for d in proc.known if d.pid in table and table[d.pid][1] == d.start}
        proc.known = alive | current
        proc.scans += 1
    return grew


class TreeScanner:
    """The scanning thread and the servers it watches (one instance per process: `SCANNER`)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._procs: dict[int, tuple[ServerProcess, float]] = {}  # by id(): proc, interval
        self._wait = 0.0
        self._due = 0.0
        self._thread: threading.Thread | None = None
        self.scans = 0  # ticks so far: one /proc read each, whatever the number of servers

    def register(self, proc: ServerProcess, interval: float) -> None:
        """Watch `proc`: first scan after `interval`, the backoff restarts from there."""
        with self._cond:
            self._procs[id(proc)] = (proc, interval)
            self._wait = self._base()
            due = time.monotonic() + self._wait
            self._due = due if self._thread is None else min(self._due, due)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="lean-tree-scan")
                self._thread.daemon = True
                self._thread.start()
            self._cond.notify()

    def unregister(self, proc: ServerProcess) -> None:
        with self._cond:
            self._procs.pop(id(proc), None)
            self._cond.notify()

    def _base(self) -> float:
        return min(interval for _, interval in self._procs.values())

    def _run(self) -> None:
        with self._cond:
            while True:
                if not self._procs:
                    self._thread = None
                    return
                now = time.monotonic()
                if now < self._due:
                    self._cond.wait(self._due - now)
                    continue
                self._tick()

    def _tick(self) -> None:
        """One scan, with the lock released while ``/proc`` is read (called holding it)."""
        self._cond.release()
        try:
            table = read_table()
        finally:
            self._cond.acquire()
        procs = [proc for proc, _ in self._procs.values()]
        grew = any(update(procs, table)) if procs else False
        self.scans += 1
        base = self._base() if self._procs else 0.0
        limit = max(base, TRACK_INTERVAL_MAX_S)
        self._wait = base if grew else min(self._wait * 2, limit)
        self._due = time.monotonic() + self._wait

    @property
    def running(self) -> bool:
        """Whether the scanning thread exists (it ends when no server is registered)."""
        with self._cond:
            return self._thread is not None

    def counts(self) -> tuple[int, dict[int, int]]:
        """(ticks so far, scans per registered server pid), read together."""
        with self._cond:
            return self.scans, {proc.pid: proc.scans for proc, _ in self._procs.values()}


SCANNER = TreeScanner()  # one per process, like the /proc it reads and the watchdog (`reaper`)
