"""Idle CPU of a server holding live Lean sessions (issue 17, item 4).

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
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.mcp.helpers import call, minimal_env  # noqa: E402

FAKE_CMD = shlex.join(
    ["/usr/bin/env", f"PYTHONPATH={REPO}", sys.executable, "-m", "tests.fake_lean"]
)
FAKE_ENV = {"FAKE_LEAN_REPORT_DELAY_MS": "5", "FAKE_LEAN_CMD_DELAY_MS": "0"}


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


class Server:
    def __init__(self, tree: Path) -> None:
        self.tree = tree
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "beam_mcp", "--lean-cmd", FAKE_CMD],
            cwd=tree,
            env=minimal_env(**{"PYTHONPATH": str(tree), **FAKE_ENV}),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.ps = psutil.Process(self.proc.pid)
        self.rid = 0

    def ask(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.rid += 1
        self.proc.stdin.write(json.dumps(call(self.rid, tool, args)).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            reply: dict[str, Any] = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.rid:
                assert reply["result"]["isError"] is False, reply
                return dict(reply["result"]["structuredContent"])

    def cpu_s(self) -> float:
        times = self.ps.cpu_times()
        return float(times.user + times.system)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


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
        start = [(server.cpu_s(), time.monotonic()) for server in servers]
        time.sleep(options.seconds)
        for server, (cpu, began) in zip(servers, start, strict=True):
            share = (server.cpu_s() - cpu) / (time.monotonic() - began) * 100
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
