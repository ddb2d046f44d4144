"""The watchdog that kills a server process's Lean trees when that process dies, even by SIGKILL.

Every Lean server a process starts carries ``LEAN_BEAM_LSP_SESSION=<token><hex>`` in its
environment, and every descendant inherits it (Lean's file workers call ``setsid`` and may
ignore EOF and SIGTERM, so neither the process group nor the parent-death signal reaches them).
The first spawn starts one watchdog per process: a separate Python in its own session, holding
the read end of a pipe whose only write end the process keeps (close-on-exec). When the process
ends, however it ends, the pipe reads EOF and the watchdog SIGKILLs every process whose
environment carries this process's token, until none is left, then exits.

This file is also the watchdog's script: it runs with ``-I -S -B`` and needs only the stdlib.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import NamedTuple

MARKER_VARIABLE = "LEAN_BEAM_LSP_SESSION"
_ROUNDS = 50  # scans after the owner died; a scan that finds nothing ends the watchdog
_PAUSE_S = 0.02


class Watchdog(NamedTuple):
    """The running watchdog of this process: its token, its pipe and its process."""

    token: str
    write_fd: int
    process: subprocess.Popen[bytes]


# One per process, like the process it watches over: started by the first spawn, never stopped.
_WATCHDOG: list[Watchdog] = []


def session_marker() -> str:
    """A fresh marker for one Lean server; the process's watchdog kills its tree at exit."""
    return watchdog_token() + os.urandom(8).hex()  # `secrets` costs a millisecond to import


def watchdog_token() -> str:
    if _WATCHDOG and _WATCHDOG[0].process.poll() is None:
        return _WATCHDOG[0].token
    _WATCHDOG[:] = [_start()]
    return _WATCHDOG[0].token


def _start() -> Watchdog:
    token = os.urandom(8).hex() + "-"
    read_fd, write_fd = os.pipe()  # both close-on-exec: no other child inherits the write end
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-B", os.path.abspath(__file__), token],
            stdin=read_fd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,  # a kill of our process group must not take it along
        )
    finally:
        os.close(read_fd)
    return Watchdog(token, write_fd, process)


def marked(token: str) -> list[int]:
    """Pids of processes whose environment carries a marker starting with `token`."""
    needle = f"{MARKER_VARIABLE}={token}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        if any(entry.startswith(needle) for entry in environ.split(b"\0")):
            found.append(int(name))
    return found


def kill_marked(token: str) -> int:
    """SIGKILL every marked process until a scan finds none (bounded); how many were killed."""
    killed = 0
    for _ in range(_ROUNDS):
        pids = [pid for pid in marked(token) if pid != os.getpid()]
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                continue
        time.sleep(_PAUSE_S)
    return killed


def _watch(token: str) -> None:
    for signame in ("SIGTERM", "SIGINT", "SIGHUP"):
        signal.signal(getattr(signal, signame), signal.SIG_IGN)  # only the pipe ends the watch
    while True:
        try:
            if not os.read(0, 4096):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    kill_marked(token)


if __name__ == "__main__":
    _watch(sys.argv[1])
