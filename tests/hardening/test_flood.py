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

    def __init__(
        self, proc: subprocess.Popen[bytes], lines: list[bytes], close: bool = True
    ) -> None:
        super().__init__(daemon=True)
        self.proc, self.lines, self.written, self.close = proc, lines, 0, close

    def run(self) -> None:
        assert self.proc.stdin is not None
        for line in self.lines:
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError):  # the test ended the server
                return
            self.written += 1
        if self.close:
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
        proc.stdin.flush()
        # stdin stays open until every answer is in: the end of input cancels the calls still
        # running (docs/MCP.md), and the last wave may still run when the server reads it
        ids = _answers(proc, 12)
        # with 4 at a time the answers come in waves: no call of a later wave finishes first
        waves = [sorted(ids[i : i + 4]) for i in range(0, 12, 4)]
        assert waves == [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], ids
        proc.stdin.close()
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


BIG = 24 * 2**20  # one argument of 24 MiB: under the 32 MiB line limit


def _peak_rss(proc: subprocess.Popen[bytes], seconds: float) -> int:
    process = psutil.Process(proc.pid)
    peak = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        peak = max(peak, process.memory_info().rss)
        time.sleep(0.05)
    return peak


def _big_calls(project: Path, count: int, directive: str) -> list[bytes]:
    """`lean_run_at` calls whose `text` is 24 MiB; the sleep backend sleeps as `path` says."""
    args = {"workspace": {"root": str(project)}, "path": directive, "line": 0, "character": 0}
    return [
        json.dumps(call(rid, "lean_run_at", {**args, "text": "x" * BIG})).encode() + b"\n"
        for rid in range(1, count + 1)
    ]


def test_big_arguments_in_flight_are_bounded_in_bytes(project: Path) -> None:
    """Sixteen calls of 24 MiB each that all keep running (and a client that keeps stdin open):
    the server takes in only as many as its in-flight byte bound allows, so its memory stays far
    below sixteen copies of them (about 480 MiB without the bound)."""
    proc = _start()
    try:
        _enter_phase_two(proc, project)
        flood = Flood(proc, _big_calls(project, 16, "60000ms"), close=False)
        flood.start()
        peak = _peak_rss(proc, 8)
        assert peak < 320 * 2**20, f"peak RSS {peak >> 20} MiB with 24 MiB calls in flight"
        assert flood.written < 16, "the server read every big call at once"
    finally:
        proc.kill()


def test_big_arguments_past_the_byte_bound_are_all_answered(project: Path) -> None:
    proc = _start()
    try:
        _enter_phase_two(proc, project)
        flood = Flood(proc, _big_calls(project, 8, "200ms"), close=False)
        flood.start()
        assert sorted(_answers(proc, 8)) == list(range(1, 9))
        flood.join(30)
        assert proc.stdin is not None
        proc.stdin.close()  # end of input cancels calls in flight: only once all answered
        assert proc.wait(30) == 0
    finally:
        proc.kill()
