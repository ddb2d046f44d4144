"""Back-pressure: a client that writes and does not read cannot grow the server.

The server stops reading stdin while too much output waits to be written or too many calls
run; once the client reads again every request gets exactly one answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from tests.mcp.helpers import REPO, SLEEP_BACKEND, call, minimal_env, modern

LINES = 3000  # each tools/list answer is ~35 KB: ~100 MB of answers against a 4 MiB bound
SETTLE_S = 1.0


def _start(*flags: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "beam_mcp", *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=minimal_env(**SLEEP_BACKEND),
        cwd=str(REPO),
    )


def _enter_phase_two(proc: subprocess.Popen[bytes], project: Path) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    args = {"workspace": {"root": str(project)}, "path": "1ms"}
    proc.stdin.write(json.dumps(call(0, "lean_sync", args)).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0


class Flood(threading.Thread):
    """Writes `lines` to the server's stdin, blocking as the pipe fills (the client's view)."""

    def __init__(self, proc: subprocess.Popen[bytes], lines: list[bytes]) -> None:
        super().__init__(daemon=True)
        self.proc, self.lines, self.written = proc, lines, 0

    def run(self) -> None:
        assert self.proc.stdin is not None
        for line in self.lines:
            self.proc.stdin.write(line)
            self.proc.stdin.flush()
            self.written += 1
        self.proc.stdin.close()


def _stalled(flood: Flood) -> None:
    """Waits until the writer makes no progress for SETTLE_S (bounded)."""
    deadline = time.monotonic() + 60
    last = -1
    while flood.written != last and flood.is_alive():
        assert time.monotonic() < deadline, "the flood never stalled"
        last = flood.written
        time.sleep(SETTLE_S)


def _answers(proc: subprocess.Popen[bytes], count: int) -> list[object]:
    assert proc.stdout is not None
    ids = []
    for _ in range(count):
        line = proc.stdout.readline()
        assert line, f"server closed stdout early after {len(ids)} lines: {ids[-3:]}"
        ids.append(json.loads(line)["id"])
    return ids


def test_unread_answers_stop_the_reading_and_all_arrive_later(project: Path) -> None:
    proc = _start()
    try:
        _enter_phase_two(proc, project)
        base = psutil.Process(proc.pid).memory_info().rss
        lines = [
            json.dumps(modern(rid, "tools/list")).encode() + b"\n" for rid in range(1, LINES + 1)
        ]
        flood = Flood(proc, lines)
        flood.start()
        _stalled(flood)
        assert flood.is_alive() and flood.written < LINES, "the server read everything"
        grown = psutil.Process(proc.pid).memory_info().rss - base
        assert grown < 40 * 2**20, f"the server grew {grown >> 20} MiB while nobody read"
        ids = _answers(proc, LINES)
        assert ids == list(range(1, LINES + 1))
        flood.join(30)
        assert proc.wait(30) == 0
        assert proc.stdout is not None and proc.stdout.read() == b""
    finally:
        proc.kill()


def test_calls_past_the_in_flight_bound_wait_and_are_all_answered(project: Path) -> None:
    proc = _start("--max-calls-in-flight", "4")
    try:
        _enter_phase_two(proc, project)
        args = {"workspace": {"root": str(project)}, "path": "300ms"}
        batch = [json.dumps(call(rid, "lean_sync", args)).encode() + b"\n" for rid in range(1, 13)]
        assert proc.stdin is not None
        proc.stdin.write(b"".join(batch))
        proc.stdin.close()
        ids = _answers(proc, 12)
        # with 4 at a time the answers come in waves: no call of a later wave finishes first
        waves = [sorted(ids[i : i + 4]) for i in range(0, 12, 4)]
        assert waves == [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], ids
        assert proc.wait(30) == 0
    finally:
        proc.kill()


def test_a_regular_file_stdin_is_paused_the_same_way(project: Path, tmp_path: Path) -> None:
    """Stdin a file: the reader thread (not the loop) reads it, and it is held back too."""
    args = {"workspace": {"root": str(project)}, "path": "1ms"}
    requests = tmp_path / "requests.jsonl"
    with open(requests, "wb") as handle:
        handle.write(json.dumps(call(0, "lean_sync", args)).encode() + b"\n")
        for rid in range(1, LINES + 1):
            handle.write(json.dumps(modern(rid, "tools/list")).encode() + b"\n")
    with open(requests, "rb") as stdin:
        proc = subprocess.Popen(
            [sys.executable, "-m", "beam_mcp"],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=minimal_env(**SLEEP_BACKEND),
            cwd=str(REPO),
        )
    try:
        process = psutil.Process(proc.pid)
        peak = 0
        for _ in range(int(3 / 0.1)):  # nobody reads for 3 s
            peak = max(peak, process.memory_info().rss)
            time.sleep(0.1)
        assert peak < 80 * 2**20, f"peak RSS {peak >> 20} MiB while nobody read"
        ids = _answers(proc, LINES)
        assert proc.wait(30) == 0
        assert proc.stdout is not None
        ids += [json.loads(line)["id"] for line in proc.stdout.read().splitlines()]
        # the call in flight at the end of input is cancelled (no answer), every list answered
        assert [rid for rid in ids if rid != 0] == list(range(1, LINES + 1))
    finally:
        proc.kill()
