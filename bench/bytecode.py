"""What verifying a runtime's bytecode costs: once in full, and on every start.

1. Installs this checkout into a temporary root, then times, median of N runs, the payload hash
   of the sources (`tree_payload`) and the bytecode hash (`bytecode_digest`): together they are
   the full check `install` (reuse) and `doctor` make.
2. Start-up through the root's wrappers, where the import gate checks every module's bytecode
   against the runtime's record before it runs: `lean-beam --help`, `lean-beam version`, and
   `lean-beam-mcp` up to its first `tools/list` answer. `--against ROOT` times the same commands
   through another install root too (e.g. one installed from the code before a change),
   alternating run by run so that both see the same load.

Run: `.venv-test/bin/python bench/bytecode.py [--runs N] [--against ROOT]`. Prints one JSON
object (milliseconds, medians: wall time, and the CPU time of the command's processes, which a
busy machine disturbs less) and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def _ms(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def _cpu_ms(action: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU of the finished child processes) in ms: CPU time moves less with the load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = _ms(action)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu * 1000


def _median(times: list[float]) -> float:
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


def _command(argv: list[str], env: dict[str, str]) -> None:
    subprocess.run(argv, env=env, check=True, capture_output=True)


def _starts(root: Path, env: dict[str, str]) -> dict[str, Callable[[], object]]:
    wrappers = root / "bin"
    return {
        "lean_beam_help": lambda: _command([str(wrappers / "lean-beam"), "--help"], env),
        "lean_beam_version": lambda: _command([str(wrappers / "lean-beam"), "version"], env),
        "mcp_first_tools_list": lambda: _first_list([str(wrappers / "lean-beam-mcp")], env),
    }


def _install(base: Path, env: dict[str, str]) -> Path:
    root = base / "beam"
    lean_beam = Path(sys.executable).parent / "lean-beam"
    subprocess.run(
        [str(lean_beam), "install", "--install-root", str(root), "--bin-dir", str(base / "bin")],
        env=env,
        check=True,
        capture_output=True,
    )
    return root


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--against", type=Path, help="another install root to time alternately")
    opts = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bytecode-bench-"))
    env = {"HOME": str(base), "PATH": "/usr/bin:/bin"}
    root = _install(base, env)
    runtime = root / "versions" / os.readlink(root / "current").split("/", 1)[1]
    pycs = [p for p in runtime.rglob("__pycache__/*.pyc") if p.is_file()]
    result: dict[str, object] = {
        "bytecode_files": len(pycs),
        "bytecode_mib": round(sum(p.stat().st_size for p in pycs) / 2**20, 1),
        "source_hash_ms": _median([_ms(lambda: tree_payload(runtime)) for _ in range(opts.runs)]),
        "bytecode_hash_ms": _median(
            [_ms(lambda: bytecode_digest(runtime)) for _ in range(opts.runs)]
        ),
    }
    roots = {"this": root} if opts.against is None else {"this": root, "against": opts.against}
    starts = {name: _starts(path, env) for name, path in roots.items()}
    times: dict[str, dict[str, list[tuple[float, float]]]] = {
        name: {row: [] for row in rows} for name, rows in starts.items()
    }
    for rows in starts.values():  # one warm-up each
        for action in rows.values():
            action()
    for _ in range(opts.runs):
        for row in starts["this"]:
            for name, rows in starts.items():
                times[name][row].append(_cpu_ms(rows[row]))
    for name, rows in times.items():
        result[name] = {
            row: {
                "wall_ms": _median([wall for wall, _ in values]),
                "cpu_ms": _median([cpu for _, cpu in values]),
            }
            for row, values in rows.items()
        }
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
