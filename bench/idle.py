"""Idle CPU of a server holding live Lean sessions.

For each ``--tree`` (default: this checkout) a ``lean-beam-mcp`` of that tree starts against the
fake Lean of *this* checkout and opens ``--workspaces`` separate projects (one ``lean_sync``
each, so each keeps a Lean session with a file worker). All servers then sit idle side by side:
after ``--settle`` seconds (long enough for the tree scan's backoff to reach its longest
interval) the server processes' own CPU time (user + system, ``psutil``; the fake Lean
processes are children and not counted) is read over ``--seconds``, and printed as a share of
one core. Target: under 0.2 %. Run:
``.venv-test/bin/python bench/idle.py [--tree PATH ...] [--workspaces 8] [--seconds 40]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from driver import Server  # noqa: E402


def projects(count: int) -> list[Path]:
    base = Path(tempfile.mkdtemp(prefix="beam-idle-"))
    roots = []
    for index in range(count):
        root = base / f"ws{index}"
        root.mkdir()
        (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
        (root / "Main.lean").write_text(f"def answer{index} : Nat := {index}\n")
        roots.append(root)
    return roots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", help="default: this checkout")
    parser.add_argument("--workspaces", type=int, default=8)
    parser.add_argument("--settle", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=40.0)
    options = parser.parse_args()
    servers = [Server(tree.resolve()) for tree in options.tree or [REPO]]
    try:
        for server in servers:
            for root in projects(options.workspaces):
                server.ask("lean_sync", {"workspace": {"root": str(root)}, "path": "Main.lean"})
            live = server.ask("beam_stats", {})["workspaces"]
            assert len(live) == options.workspaces, live
        time.sleep(options.settle)
        start = [(server.cpu_ms(), time.monotonic()) for server in servers]
        time.sleep(options.seconds)
        for server, (cpu, began) in zip(servers, start, strict=True):
            share = (server.cpu_ms() - cpu) / 1000 / (time.monotonic() - began) * 100
            print(
                f"{server.tree}: {options.workspaces} live workspaces, idle server CPU "
                f"{share:.3f} % of a core over {options.seconds:.0f} s (target < 0.2 %)"
            )
        print(f"load average {psutil.getloadavg()[0]:.1f}")
    finally:
        for server in servers:
            server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
