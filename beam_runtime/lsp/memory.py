"""What Lean processes cost: which processes they are, and their proportional set size (PSS).

Every Lean server lean-beam starts passes two variables to its whole tree: its session marker
(``reaper.MARKER_VARIABLE``) and the memory scope of the user (``SCOPE_VARIABLE``, one per user
unless set otherwise). The processes carrying a scope are the Lean processes of every host and
every in-process server of that user, whoever started them. PSS (``/proc/PID/smaps_rollup``)
divides each shared page among the processes that map it, so the ``.olean`` files every Lean
worker maps count once in the sum. Reads ``/proc``; blocking, so callers on an event loop run
it in a thread. Stdlib only.
"""

from __future__ import annotations

import os

from beam_runtime.lsp.reaper import MARKER_VARIABLE

SCOPE_VARIABLE = "LEAN_BEAM_MEMORY_SCOPE"
_PAGE_KB = 1024


def carrying(variable: str, prefix: str, *, exact: bool = False) -> list[int]:
    """Pids of this user's Lean processes (they carry a session marker) whose ``variable``
    starts with (or is) ``prefix``."""
    needle = f"{variable}={prefix}".encode()
    marker = f"{MARKER_VARIABLE}=".encode()
    me = os.getuid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != me:
                continue
            with open(f"/proc/{name}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        entries = environ.split(b"\0")
        matches = needle in entries if exact else any(e.startswith(needle) for e in entries)
        if matches and any(entry.startswith(marker) for entry in entries):
            found.append(int(name))
    return found


def lean_processes(scope: str) -> list[int]:
    """Pids of the Lean processes of a memory scope."""
    return carrying(SCOPE_VARIABLE, scope, exact=True) if scope else []


def session_processes(marker: str) -> list[int]:
    """Pids of one Lean server's tree (its session marker)."""
    return carrying(MARKER_VARIABLE, marker)


def pss_bytes(pid: int) -> int:
    """The process's PSS in bytes (its RSS where the kernel has no smaps_rollup); 0 if gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
            for line in handle:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * _PAGE_KB
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def usage(pids: list[int]) -> tuple[int, int]:
    """(how many of ``pids`` still run, their summed PSS in bytes)."""
    sizes = [pss_bytes(pid) for pid in pids]
    return sum(1 for size in sizes if size), sum(sizes)


def physical_memory() -> int:
    """Bytes of physical memory (0 when unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        return 0


def user_scope() -> str:
    """The memory scope of this process: ``LEAN_BEAM_MEMORY_SCOPE`` when set (each test sets
    one of its own), else one per user."""
    return os.environ.get(SCOPE_VARIABLE) or f"uid-{os.getuid()}"


def parse_size(text: str) -> int:
    """Bytes from ``123``, ``512K``, ``4M``, ``2G`` (powers of 1024); ``ValueError`` if not."""
    spelled = text.strip().upper()
    factor = 1
    if spelled[-1:] in ("K", "M", "G"):
        factor = 1024 ** ("KMG".index(spelled[-1]) + 1)
        spelled = spelled[:-1]
    if not spelled.isdigit():
        raise ValueError(f"expected bytes or a number with K, M or G, got {text!r}")
    value = int(spelled) * factor
    if value <= 0:
        raise ValueError(f"the budget must be positive, got {text!r}")
    return value
