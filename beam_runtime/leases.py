"""Shared leases that mark a runtime as in use (docs/RUNTIME.md, "What keeps a runtime alive").

Every process started by a runtime's launcher holds `flock(LOCK_SH)` on
`<root>/state/leases/<id>.lease` for its whole life. Prune takes `LOCK_EX` on the same file from
its final re-check until the runtime has been renamed to trash, so a runtime is never removed
under a live process and a process never starts on a runtime being removed.

`LOCK_EX` is also how anyone learns whether a lease is held (`lease_is_held`, used by `runtime
list`, prune's plan and doctor): that probe holds it for a moment. So a process that finds the
lease locked does not conclude "pruned" at once: it retries for up to `LEASE_WAIT_S`, and it is
pruned only when its directory has left `versions/<id>` (prune renames it while holding the
lock). Stdlib only and import-light: every launcher runs this before anything else.
"""

from __future__ import annotations

import fcntl
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from beam_runtime.errors import BeamError

LEASE_WAIT_S = 2.0


class LeaseRefused(Exception):
    """The runtime was pruned (`pruned`), or prune held its lease for longer than allowed."""

    def __init__(self, message: str, *, pruned: bool) -> None:
        super().__init__(message)
        self.message = message
        self.pruned = pruned


def lease_file(root: str, runtime_id: str) -> str:
    return os.path.join(root, "state", "leases", f"{runtime_id}.lease")


def _published(root: str, runtime_id: str) -> bool:
    """True while `versions/<id>` is still a real directory (prune renames it away)."""
    path = os.path.join(root, "versions", runtime_id)
    return os.path.isdir(path) and not os.path.islink(path)


def _same_file(fd: int, path: str) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _lock_shared(fd: int, root: str, runtime_id: str, wait_s: float) -> None:
    """flock(LOCK_SH), retried while a probe or prune holds LOCK_EX; raises `LeaseRefused`."""
    import time

    deadline = time.monotonic() + wait_s
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        if not _published(root, runtime_id):
            raise LeaseRefused(f"runtime {runtime_id} was pruned; restart", pruned=True)
        if time.monotonic() >= deadline:
            raise LeaseRefused(
                f"runtime {runtime_id} is being pruned (its lease has been held exclusively "
                f"for over {wait_s:g} s); retry, or restart if it was removed",
                pruned=False,
            )
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def acquire_shared(root: str, runtime_id: str, wait_s: float = LEASE_WAIT_S) -> int:
    """Take this runtime's shared lease and return its descriptor; raises `LeaseRefused`.

    The lease lasts as long as the descriptor stays open: keep it for the life of the process
    (flock locks belong to the open file, so a probe from this same process also sees it held).
    """
    path = lease_file(root, runtime_id)
    for _attempt in range(3):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise LeaseRefused(
                f"runtime {runtime_id} was pruned; restart ({path} is missing)", pruned=True
            ) from None
        try:
            _lock_shared(fd, root, runtime_id, wait_s)
        except LeaseRefused:
            os.close(fd)
            raise
        if not _published(root, runtime_id):
            os.close(fd)
            raise LeaseRefused(f"runtime {runtime_id} was pruned; restart", pruned=True)
        if _same_file(fd, path):
            return fd
        # Pruned and installed again between our open and our lock: lock the new lease file.
        os.close(fd)
    raise LeaseRefused(f"runtime {runtime_id} keeps being replaced; restart", pruned=True)


def _refused(runtime_id: str, refusal: LeaseRefused) -> BeamError:
    from beam_runtime.errors import BeamError

    return BeamError(
        "runtimePruned" if refusal.pruned else "runtimeBusy",
        refusal.message,
        "restart the MCP client or rerun the command through <root>/bin",
        {"runtime_id": runtime_id},
    )


def hold_lease(root: Path, runtime_id: str) -> int:
    """`acquire_shared` for callers that report `BeamError`s (`runtimePruned`, `runtimeBusy`)."""
    try:
        return acquire_shared(str(root), runtime_id)
    except LeaseRefused as refusal:
        raise _refused(runtime_id, refusal) from None


def lease_is_held(root: Path, runtime_id: str) -> bool:
    """True when a live process holds this runtime's lease (probed with a non-blocking LOCK_EX).

    A missing lease file means nobody can hold it: False.
    """
    path = lease_file(str(root), runtime_id)
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


class Holder:
    """A live process that holds a runtime's lease open: its pid and, when readable, command."""

    __slots__ = ("command", "pid")

    def __init__(self, pid: int, command: str | None) -> None:
        self.pid = pid
        self.command = command

    def to_json(self) -> dict[str, object]:
        body: dict[str, object] = {"pid": self.pid}
        if self.command is not None:
            body["command"] = self.command
        return body

    def describe(self) -> str:
        return f"pid {self.pid}" + (f" ({self.command})" if self.command else "")


def _locked_inodes() -> set[int] | None:
    """Inode numbers that carry a lock in `/proc/locks`; None where there is no such file."""
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    inodes = set()
    for line in lines:
        fields = line.split()
        spot = 5 if fields[1:2] != ["->"] else 6  # blocked waiters are listed with "->"
        if len(fields) > spot and fields[spot].count(":") == 2:
            inodes.add(int(fields[spot].rsplit(":", 1)[1]))
    return inodes


def _command(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    parts = [p.decode("utf-8", "replace") for p in raw.split(b"\0") if p]
    return " ".join(parts) or None


def _proc_holders(identities: dict[tuple[int, int], str], exclude: int) -> dict[str, list[Holder]]:
    """One pass over `/proc/*/fd`: for each lease identity, the processes that have it open."""
    found: dict[str, list[Holder]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == exclude:
            continue
        try:
            fds = os.listdir(f"/proc/{name}/fd")
        except OSError:  # another user's process, or it just ended
            continue
        for fd in fds:
            try:
                info = os.stat(f"/proc/{name}/fd/{fd}")
            except OSError:
                continue
            runtime_id = identities.get((info.st_dev, info.st_ino))
            if runtime_id is not None:
                holders = found.setdefault(runtime_id, [])
                if all(h.pid != int(name) for h in holders):
                    holders.append(Holder(int(name), _command(int(name))))
    return found


def _psutil_holders(path: str, exclude: int) -> list[Holder]:
    import psutil

    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if proc.info["pid"] == exclude:
            continue
        try:
            if any(f.path == path for f in proc.open_files()):
                found.append(Holder(proc.info["pid"], " ".join(proc.info["cmdline"] or [])))
        except (psutil.Error, OSError):
            continue
    return found


def lease_holders(root: Path, runtime_id: str, exclude: int | None = None) -> list[Holder]:
    """Live processes other than `exclude` (default: this one) that hold this runtime's lease."""
    return all_lease_holders(root, [runtime_id], exclude).get(runtime_id, [])


def all_lease_holders(
    root: Path, runtime_ids: list[str], exclude: int | None = None
) -> dict[str, list[Holder]]:
    """`lease_holders` for several runtimes at once (runtimes nobody holds are left out).

    Linux: `/proc/locks` says which lease files are locked at all, then one pass over
    `/proc/<pid>/fd` says who has them open (a launcher opens its lease only to hold it).
    Elsewhere psutil's open files. Only the caller's own processes are visible, which are the
    ones that can run its runtimes.
    """
    me = os.getpid() if exclude is None else exclude
    inodes = _locked_inodes()
    identities: dict[tuple[int, int], str] = {}
    for runtime_id in runtime_ids:
        path = lease_file(str(root), runtime_id)
        try:
            info = os.stat(path)
        except FileNotFoundError:
            continue
        if inodes is None:
            if lease_is_held(root, runtime_id):
                identities[(info.st_dev, info.st_ino)] = runtime_id
        elif info.st_ino in inodes:
            identities[(info.st_dev, info.st_ino)] = runtime_id
    if not identities:
        return {}
    if inodes is None:
        return {
            rid: _psutil_holders(os.path.realpath(lease_file(str(root), rid)), me)
            for rid in identities.values()
        }
    return _proc_holders(identities, me)
