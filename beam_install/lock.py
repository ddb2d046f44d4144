"""`state/install.lock`: the lock install and prune hold, and its holder record.

The lock itself is a `filelock` on `state/install.lock`; the kernel drops it when the holder dies,
so a killed installer never leaves a stale lock. Next to it, `install.lock.json` says who holds
it (pid, command, started_at, host) so a timeout can name the holder.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path

from filelock import FileLock, Timeout

from beam_runtime.errors import BeamError
from beam_runtime.layout import lock_holder_path, lock_path

INSTALL_LOCK_TIMEOUT = 120.0
PRUNE_LOCK_TIMEOUT = 10.0


def _holder_text(root: Path) -> str:
    try:
        holder = json.loads(lock_holder_path(root).read_text())
        return (
            f"pid {holder['pid']} ({holder['command']}) on {holder['host']} "
            f"since {holder['started_at']}"
        )
    except (OSError, ValueError, KeyError, TypeError):
        return "an unknown process (no readable holder record)"


def _write_holder(root: Path, command: str) -> None:
    record = {
        "pid": os.getpid(),
        "command": command,
        "started_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": socket.gethostname(),
    }
    # Written in place: only the lock holder writes it, and a torn record reads as "unknown".
    lock_holder_path(root).write_text(json.dumps(record) + "\n")


@contextmanager
def install_lock(root: Path, *, timeout: float, command: str | None = None) -> Iterator[None]:
    """Hold `<root>/state/install.lock` (the `state/` directory must exist).

    Waits up to `timeout` seconds; on timeout raises `BeamError(lockTimeout)` naming the holder.
    """
    label = command or " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]])
    lock = FileLock(str(lock_path(root)), timeout=timeout, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise BeamError(
            "lockTimeout",
            f"timed out after {timeout:g} s waiting for {lock_path(root)}; "
            f"it is held by {_holder_text(root)}",
            "wait for that install or prune to finish (or stop it), then retry; "
            "a longer wait: --lock-timeout SECONDS",
            {"lock": str(lock_path(root))},
        ) from None
    try:
        _write_holder(root, label)
        yield
    finally:
        with suppress(OSError):
            lock_holder_path(root).unlink()
        lock.release()
