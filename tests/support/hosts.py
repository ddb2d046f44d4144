"""Shared Lean hosts in tests: finding them, and making sure none outlives its test.

Every test runs with its own short socket directory (`XDG_RUNTIME_DIR`, set by the autouse
fixture in `tests/conftest.py` and passed on by `minimal_env` and `client_env`) and a host idle
time of 60 s. After the test every host process started meanwhile whose socket directory or
HOME lies in the test's directories is killed (SIGKILL: its watchdog then kills its Lean
processes, as it would after any crash).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

import psutil

HOST_MARK = "beam_runtime.host.main"
PASSED_ON = ("XDG_RUNTIME_DIR", "LEAN_BEAM_MEMORY_SCOPE", "LEAN_BEAM_HOST", "LEAN_BEAM_HOST_IDLE_S")


def passed_on() -> dict[str, str]:
    """The host settings of this test's environment, for the environments tests build."""
    return {name: os.environ[name] for name in PASSED_ON if name in os.environ}


def host_processes(places: Iterable[str] = (), since: float = 0.0) -> list[psutil.Process]:
    """Live host processes started after ``since`` whose XDG_RUNTIME_DIR or HOME lies under
    one of ``places`` (every host process when ``places`` is empty)."""
    prefixes = [p.rstrip("/") + "/" for p in places]
    found = []
    for process in psutil.process_iter(["cmdline", "create_time"]):
        try:
            if HOST_MARK not in " ".join(process.info["cmdline"] or []):
                continue
            if process.info["create_time"] < since - 1:
                continue
            if prefixes:
                environ = process.environ()
                seen = [environ.get("XDG_RUNTIME_DIR", ""), environ.get("HOME", "")]
                if not any((s + "/").startswith(p) for s in seen for p in prefixes):
                    continue
            if process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.Error:
            continue
    return found


def stop_hosts(places: Iterable[str], since: float, wait_s: float = 10.0) -> list[int]:
    """SIGKILLs those hosts and waits for them; the pids killed."""
    doomed = host_processes(places, since)
    for process in doomed:
        try:
            process.kill()
        except psutil.Error:
            continue
    psutil.wait_procs(doomed, timeout=wait_s)
    return [process.pid for process in doomed]


def wait_gone(pids: Iterable[int], timeout_s: float) -> list[int]:
    """The pids still running (not zombies) after waiting up to ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if _running(pid)]
        if alive:
            time.sleep(0.05)
    return alive


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
