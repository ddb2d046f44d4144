"""What verifying a runtime's bytecode costs, and what not shipping bytecode would.

1. Installs a runtime into a temporary root, then times, median of N runs, the payload hash of
   the sources (`tree_payload`) and the new bytecode hash (`bytecode_digest`): together they are
   the full check `install` (reuse) and `doctor` make.
2. Cold start of the runtime's `lean-beam-mcp` up to its first `tools/list` answer, as shipped
   (with bytecode) and with Python pointed at an empty bytecode cache (`-X pycache_prefix`),
   which is what a runtime without bytecode would cost on every start.

Run: `.venv-test/bin/python bench/bytecode.py [--runs N]`. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from beam_runtime.record_check import bytecode_digest, tree_payload

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}})


def _median_ms(action: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 1)


def _first_list(argv: list[str], env: dict[str, str]) -> None:
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(LIST.encode() + b"\n")
    proc.stdin.flush()
    assert proc.stdout.readline()
    proc.stdin.close()
    proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    opts = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bytecode-bench-"))
    env = {"HOME": str(base), "PATH": "/usr/bin:/bin"}
    root = base / "beam"
    lean_beam = Path(sys.executable).parent / "lean-beam"
    subprocess.run(
        [
            str(lean_beam),
            "install",
            "--install-root",
            str(root),
            "--bin-dir",
            str(base / "bin"),
            "--json",
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    runtime = root / "versions" / os.readlink(root / "current").split("/", 1)[1]
    pycs = [p for p in runtime.rglob("__pycache__/*") if p.is_file()]
    launcher = runtime / "bin" / "lean-beam-mcp"
    text = launcher.read_text()
    python = text.split("exec ", 1)[1].split(" -I ", 1)[0].strip("'")
    empty = base / "empty-pycache"
    uncached = base / "lean-beam-mcp-uncached"
    uncached.write_text(text.replace(" -I -S -B ", f" -I -S -B -X pycache_prefix={empty} "))
    uncached.chmod(0o755)
    # the uncached launcher must find its runtime: put it where the real one is
    shadow = runtime / "bin" / "lean-beam-mcp.uncached"
    (runtime / "bin").chmod(0o755)
    shadow.write_text(uncached.read_text())
    shadow.chmod(0o755)
    result = {
        "python": python,
        "bytecode_files": len(pycs),
        "bytecode_mib": round(sum(p.stat().st_size for p in pycs) / 2**20, 1),
        "source_hash_ms": _median_ms(lambda: tree_payload(runtime), opts.runs),
        "bytecode_hash_ms": _median_ms(lambda: bytecode_digest(runtime), opts.runs),
        "first_tools_list_ms_with_bytecode": _median_ms(
            lambda: _first_list([str(launcher)], env), opts.runs
        ),
        "first_tools_list_ms_without_bytecode": _median_ms(
            lambda: _first_list([str(shadow)], env), opts.runs
        ),
    }
    shadow.unlink()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
