"""The live hosts of this user: what ``lean-beam host list|stop`` and ``doctor`` show.

Each socket of the socket directory is asked ``host/stats`` as a probe (no lease, any runtime);
a socket nobody answers on is the leftover of a host that died and is skipped. Stopping asks
``host/stop`` and waits (bounded) until the host's process has gone.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from beam_runtime.host import place
from beam_runtime.host.client import ask

FIELDS = (
    "root",
    "toolchain",
    "runtime_id",
    "pid",
    "socket",
    "connections",
    "documents",
    "lean_processes",
    "pss_bytes",
    "idle_s",
)


def live_hosts(directory: str | None = None, timeout_s: float = 2.0) -> list[dict[str, Any]]:
    """Every host answering in the socket directory, as ``host list --json`` shows it."""
    found = []
    for socket_path in place.sockets(directory):
        try:
            stats = ask(socket_path, "host/stats", timeout_s)
        except Exception:
            continue  # the socket of a host that has died, or one going away right now
        if isinstance(stats, dict):
            found.append({name: stats.get(name) for name in FIELDS})
    return found


@dataclass
class HostListing:
    hosts: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"hosts": self.hosts}

    def to_text(self) -> str:
        if not self.hosts:
            return "no shared Lean host is running"
        lines = []
        for host in self.hosts:
            lines.append(f"{host['root']}  ({host['toolchain'] or 'no toolchain file'})")
            lines.append(
                f"  pid {host['pid']}, runtime {host['runtime_id']}, "
                f"{host['connections']} agent(s), {host['documents']} document(s), "
                f"{host['lean_processes']} Lean process(es), {mib(host['pss_bytes'])} PSS, "
                f"idle {host['idle_s']:.0f} s"
            )
        return "\n".join(lines)


@dataclass
class StopResult:
    stopped: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"stopped": self.stopped, "failed": self.failed}

    def to_text(self) -> str:
        if not self.stopped and not self.failed:
            return "no matching shared Lean host is running"
        lines = [f"stopped: {h['root']} (pid {h['pid']})" for h in self.stopped]
        lines += [f"not stopped: {h['root']} (pid {h['pid']}): {h['error']}" for h in self.failed]
        return "\n".join(lines)


def stop_hosts(hosts: list[dict[str, Any]], wait_s: float = 15.0) -> StopResult:
    """Asks each host to stop, then waits until its process has ended."""
    result = StopResult()
    for host in hosts:
        try:
            ask(str(host["socket"]), "host/stop")
        except Exception as error:
            result.failed.append({**host, "error": f"it did not answer: {error}"})
            continue
        if _gone(int(host["pid"]), wait_s):
            result.stopped.append(host)
        else:
            result.failed.append({**host, "error": f"still running after {wait_s:g} s"})
    return result


def _gone(pid: int, wait_s: float) -> bool:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not _running(pid):
            return True
        time.sleep(0.05)
    return not _running(pid)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != b"Z"


def mib(size: Any) -> str:
    return f"{(size or 0) / (1 << 20):.0f} MiB"


def canonical(root: str) -> str:
    return os.path.realpath(os.path.expanduser(root))
