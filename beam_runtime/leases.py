"""Shared leases that mark a runtime as in use (decision 10).

Every process started by a runtime's launcher holds `flock(LOCK_SH)` on
`<root>/state/leases/<id>.lease` for its whole life. Prune takes `LOCK_EX` on the same file from
its final re-check until the runtime has been renamed to trash, so a runtime is never removed
under a live process and a process never starts on a runtime being removed.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from beam_runtime.errors import BeamError
from beam_runtime.layout import lease_path


def _pruned(runtime_id: str, why: str) -> BeamError:
    return BeamError(
        "runtimePruned",
        f"runtime {runtime_id} was pruned; restart ({why})",
        "restart the MCP client or rerun the command through <root>/bin",
        {"runtime_id": runtime_id},
    )


def hold_lease(root: Path, runtime_id: str) -> int:
    """Take this runtime's shared lease and return its descriptor.

    The lease lasts as long as the descriptor stays open: keep it for the life of the process
    (flock locks belong to the open file, so a probe from this same process also sees it held).

    Raises `BeamError(runtimePruned)` when the lease file is gone or prune holds it exclusively.
    """
    path = str(lease_path(root, runtime_id))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise _pruned(runtime_id, f"{path} is missing") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise _pruned(runtime_id, "prune holds its lease") from None
    return fd


def lease_is_held(root: Path, runtime_id: str) -> bool:
    """True when a live process holds this runtime's lease (probed with a non-blocking LOCK_EX).

    A missing lease file means nobody can hold it: False.
    """
    path = str(lease_path(root, runtime_id))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
