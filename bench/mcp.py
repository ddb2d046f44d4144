"""MCP server benchmark: cold start, pipelined calls, idle RSS.

1. Cold start: spawn to the first modern `tools/list` answer, median of N runs, next to
   `python -c pass` with the same interpreter flags. Two ways of starting: the venv console
   script `lean-beam-mcp`, and `python -I -S -B` with an explicit path (what an installed
   runtime's launcher does); `--command` times any other command, such as
   `<root>/bin/lean-beam-mcp`.
2. `beam_version` calls pipelined on one connection, before and after the first Lean tool call
   (which moves the server from its synchronous start phase to the anyio phase).
3. Idle RSS after `tools/list`, and after the first Lean tool call.

Run: `.venv-test/bin/python bench/mcp.py [--runs N] [--calls N] [--command CMD]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
LIST = (
    json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    ).encode()
    + b"\n"
)
ENV = {k: os.environ[k] for k in ("HOME", "PATH", "USER", "LOGNAME") if k in os.environ}
ENV["BEAM_NO_DELEGATE"] = "1"


def isolated(code: str) -> list[str]:
    paths = [str(REPO), sysconfig.get_paths()["purelib"]]
    return [sys.executable, "-I", "-S", "-B", "-c", f"import sys; sys.path[:0]={paths!r}; {code}"]


def commands(extra: str | None) -> dict[str, tuple[list[str], list[str]]]:
    script = str(Path(sys.executable).with_name("lean-beam-mcp"))
    found = {
        "console script": ([script], [sys.executable, "-c", "pass"]),
        "isolated (-I -S -B)": (
            isolated("from beam_mcp.main import main; raise SystemExit(main())"),
            [sys.executable, "-I", "-S", "-B", "-c", "pass"],
        ),
    }
    if extra:
        found["--command"] = (shlex.split(extra), [sys.executable, "-I", "-S", "-B", "-c", "pass"])
    return found


def first_answer_ms(argv: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(LIST)
    proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = (time.perf_counter() - start) * 1000
    assert b'"tools"' in line, line[:200]
    proc.stdin.close()
    proc.wait()
    return elapsed


def pass_ms(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, env=ENV)
    return (time.perf_counter() - start) * 1000


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def pipelined(proc: subprocess.Popen[bytes], calls: int, first_id: int) -> float:
    assert proc.stdin is not None and proc.stdout is not None
    payload = b"".join(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": first_id + i,
                "method": "tools/call",
                "params": {"name": "beam_version", "arguments": {}, "_meta": META},
            }
        ).encode()
        + b"\n"
        for i in range(calls)
    )
    stdin = proc.stdin
    start = time.perf_counter()
    feeder = threading.Thread(target=lambda: (stdin.write(payload), stdin.flush()))
    feeder.start()
    for _ in range(calls):
        assert b'"result"' in proc.stdout.readline()
    elapsed = time.perf_counter() - start
    feeder.join()
    return calls / elapsed


def throughput_and_rss(calls: int) -> dict[str, float]:
    proc = subprocess.Popen(
        isolated("from beam_mcp.main import main; raise SystemExit(main())"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(LIST)
    proc.stdin.flush()
    proc.stdout.readline()
    time.sleep(0.3)
    out = {"rss_after_list_mib": rss_kib(proc.pid) / 1024}
    out["start_phase_calls_s"] = pipelined(proc, calls, 10)
    drop = {
        "jsonrpc": "2.0",
        "id": "drop",
        "method": "tools/call",
        "params": {
            "name": "lean_drop_workspace",
            "_meta": META,
            "arguments": {"workspace": {"root": "/nonexistent/bench"}},
        },
    }
    proc.stdin.write(json.dumps(drop).encode() + b"\n")
    proc.stdin.flush()
    proc.stdout.readline()
    time.sleep(0.3)
    out["rss_after_first_call_mib"] = rss_kib(proc.pid) / 1024
    out["async_phase_calls_s"] = pipelined(proc, calls, 10 + calls)
    proc.stdin.close()
    proc.wait()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--command", help="another server command to time, e.g. a wrapper")
    args = parser.parse_args()
    print(f"cold start to first tools/list answer (median of {args.runs}; target < 150 ms)")
    for label, (server, baseline) in commands(args.command).items():
        server_ms = statistics.median(first_answer_ms(server) for _ in range(args.runs))
        base_ms = statistics.median(pass_ms(baseline) for _ in range(args.runs))
        print(f"  {label:22} {server_ms:7.1f} ms   python -c pass: {base_ms:6.1f} ms")
    figures = throughput_and_rss(args.calls)
    print(f"pipelined beam_version, {args.calls} calls on one connection (target >= 3000/s)")
    print(f"  start phase            {figures['start_phase_calls_s']:7.0f} calls/s")
    print(f"  after a Lean tool call {figures['async_phase_calls_s']:7.0f} calls/s")
    print("idle RSS (target < 40 MB)")
    print(f"  after tools/list       {figures['rss_after_list_mib']:7.1f} MiB")
    print(f"  after a Lean tool call {figures['rss_after_first_call_mib']:7.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
