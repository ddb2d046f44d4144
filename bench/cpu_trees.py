"""CPU, not wall time, of a cold start and of pipelined calls, for one or more source trees.

On a shared machine wall-clock figures follow the neighbours' load; the CPU a process itself
spends (user + system, from the kernel's accounting of the reaped child) moves much less. For
each tree, in turns (A B A B ...), the server is started with `python -I -S -B` and that tree
first on `sys.path`:

- cold start: `tools/list` on stdin, then EOF; the CPU of the whole process until it exits;
- pipelined: the same plus N `beam_version` calls in one write; CPU per call is the difference
  to the cold start, divided by N.

Run: `.venv-test/bin/python bench/cpu_trees.py TREE [TREE ...] [--runs 21] [--calls 2000]`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
from pathlib import Path

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _line(ident: int, method: str, params: dict[str, object] | None = None) -> bytes:
    body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": {"_meta": META}}
    if params:
        body["params"] = {**params, "_meta": META}
    return json.dumps(body).encode() + b"\n"


def _command(tree: Path) -> list[str]:
    paths = [str(tree), sysconfig.get_paths()["purelib"]]
    code = f"import sys; sys.path[:0]={paths!r}; from beam_mcp.main import main; main()"
    return [sys.executable, "-I", "-S", "-B", "-c", code]


def cpu_of(tree: Path, stdin: bytes) -> float:
    """Seconds of CPU (user + system) the server spent answering `stdin` and exiting at EOF."""
    env = {k: os.environ[k] for k in ("HOME", "PATH", "USER", "LOGNAME") if k in os.environ}
    env["BEAM_NO_DELEGATE"] = "1"
    child = subprocess.Popen(
        _command(tree), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=str(tree)
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(stdin)
    child.stdin.close()
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0 or not out:
        raise SystemExit(f"{tree}: server exited {child.returncode} with {len(out)} bytes")
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    cold = _line(1, "tools/list")
    calls = cold + b"".join(
        _line(i + 2, "tools/call", {"name": "beam_version", "arguments": {}})
        for i in range(args.calls)
    )
    starts: dict[Path, list[float]] = {t: [] for t in args.trees}
    piped: dict[Path, list[float]] = {t: [] for t in args.trees}
    for _ in range(args.runs):
        for tree in args.trees:
            starts[tree].append(cpu_of(tree, cold))
            piped[tree].append(cpu_of(tree, calls))
    print(f"median of {args.runs} runs each, trees taken in turns")
    for tree in args.trees:
        start = statistics.median(starts[tree])
        per_call = (statistics.median(piped[tree]) - start) / args.calls
        print(
            f"{tree}: cold start to tools/list and exit {start * 1000:.1f} ms CPU; "
            f"pipelined beam_version {per_call * 1e6:.1f} us CPU per call"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
