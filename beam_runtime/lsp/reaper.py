"""The watchdog that kills what a server process started (Lean, Lake) when it dies, even by SIGKILL.

Every process the server starts (Lean servers, ``lake build``, ``beam-cli mcp-config``) carries
``LEAN_BEAM_LSP_SESSION=<token><hex>`` in its environment (`marked_environment`), and every
descendant inherits it (Lean's file workers and Lake's builds call ``setsid`` and may ignore EOF
and SIGTERM, so neither the process group nor the parent-death signal reaches them). The first
spawn starts one watchdog per process, in its own session, holding the read end of a pipe whose
only write end the process keeps (close-on-exec). When the process ends, however it ends, the
pipe reads EOF and the watchdog SIGKILLs every process whose environment carries this process's
token, until a scan finds none, then exits.

The watchdog is a few lines of ``/bin/sh`` around ``grep`` (about a megabyte, no interpreter to
start). Where either is missing it is this file run by a second Python (``-I -S -B``, stdlib
only), which does the same.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import NamedTuple

MARKER_VARIABLE = "LEAN_BEAM_LSP_SESSION"
_ROUNDS = 50  # scans after the owner died; a scan that finds nothing ends the watchdog
_PAUSE_S = 0.02
_SHELL = "/bin/sh"

# $1: grep, $2: this process's marker and token. Reads stdin until EOF (nothing is ever written),
# then kills every process whose environment holds that text (the token is 16 random hex digits:
# only our own children carry it), scan after scan until one finds none, at most 50 scans.
_SCRIPT = """trap '' HUP INT TERM
while read -r _; do :; done
n=0
while [ "$n" -lt 50 ]; do
  found=
  for f in $("$1" -l -s -a -F -e "$2" /proc/[0-9]*/environ); do
    p=${f#/proc/}; p=${p%/environ}
    [ "$p" = "$$" ] || { kill -9 "$p" 2>/dev/null; found=1; }
  done
  [ -n "$found" ] || exit 0
  n=$((n + 1))
  sleep 0.02 2>/dev/null
done
"""


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


def marked_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) plus a fresh marker: what every child is started with."""
    environment = dict(os.environ if env is None else env)
    environment[MARKER_VARIABLE] = session_marker()
    return environment


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
            _command(token),
            stdin=read_fd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,  # a kill of our process group must not take it along
            env=_environment(),
        )
    finally:
        os.close(read_fd)
    return Watchdog(token, write_fd, process)


def _command(token: str) -> list[str]:
    """The shell watchdog, or this file run by Python where the shell or grep is missing."""
    grep = _on_path("grep")
    if grep is not None and os.access(_SHELL, os.X_OK):
        return [_SHELL, "-c", _SCRIPT, "lean-beam-watchdog", grep, f"{MARKER_VARIABLE}={token}"]
    return [sys.executable, "-I", "-S", "-B", os.path.abspath(__file__), token]


def _on_path(name: str) -> str | None:
    """``shutil.which`` without importing shutil (and the compression modules it loads)."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or os.curdir, name)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return None


def _environment() -> dict[str, str]:
    """PATH (for ``sleep``) and byte-wise matching; never a marker of its own."""
    return {"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C"}


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
