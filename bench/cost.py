"""Server CPU per call against file size (issue 17), for one source tree of lean-beam.

For each size (lines of ``Big.lean``) a fresh ``lean-beam-mcp`` from ``--tree`` (default: this
checkout) runs against the fake Lean of *this* checkout, so two trees see the same fake:

- unchanged: ``lean_hover`` on the unchanged file, ``--calls`` times;
- one-line edit: one line of the file rewritten on disk, then ``lean_update`` (which sends the
  edit to Lean), ``--edits`` times, counting the notifications Lean sends back (1 s to settle);

and prints the server process's own CPU time (user + system, ``psutil``) per call, and the
``lean`` counters of ``beam_stats`` when the tree has them. Run:
``.venv-test/bin/python bench/cost.py [--tree PATH] [--sizes 100,10000,50000]``.
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

from tests.mcp.helpers import call, minimal_env, structured  # noqa: E402

FAKE_CMD = shlex.join(
    ["/usr/bin/env", f"PYTHONPATH={REPO}", sys.executable, "-m", "tests.fake_lean"]
)
FAKE_ENV = {"FAKE_LEAN_REPORT_DELAY_MS": "5", "FAKE_LEAN_CMD_DELAY_MS": "0"}


def project(lines: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="beam-cost-"))
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "Big.lean").write_text(body(lines, 0))
    return root


def body(lines: int, serial: int) -> str:
    middle = lines // 2
    return "".join(f"def d{i} : Nat := {serial if i == middle else i}\n" for i in range(lines))


class Server:
    """``lean-beam-mcp`` of ``tree`` (its own directory first on ``sys.path``)."""

    def __init__(self, tree: Path, *flags: str, **env: str) -> None:
        args = flags or ("--lean-cmd", FAKE_CMD)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "beam_mcp", *args],
            cwd=tree,
            env=minimal_env(**{"PYTHONPATH": str(tree), **FAKE_ENV, **env}),
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
                return structured(reply)

    def cpu_ms(self) -> float:
        times = self.ps.cpu_times()
        return (times.user + times.system) * 1000

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def measure(tree: Path, lines: int, calls: int, edits: int) -> dict[str, Any]:
    root = project(lines)
    server = Server(tree)
    ws = {"workspace": {"root": str(root)}, "path": "Big.lean"}
    try:
        version = server.ask("lean_sync", ws)["version"]
        hover = {**ws, "version": version, "line": 0, "character": 4}
        for _ in range(20):
            server.ask("lean_hover", hover)
        time.sleep(2.5)  # past the racy window of the last write
        start = server.cpu_ms()
        for _ in range(calls):
            server.ask("lean_hover", hover)
        unchanged = (server.cpu_ms() - start) / calls
        big = root / "Big.lean"
        texts = [body(lines, -1), body(lines, -2)]
        start = server.cpu_ms()
        for serial in range(edits):
            big.write_text(texts[serial % 2])
            server.ask("lean_update", ws)
        time.sleep(1.0)  # Lean's answers to the last edit arrive and are handled
        cpu = server.cpu_ms() - start
        stats = server.ask("beam_stats", {})
    finally:
        server.close()
    (entry,) = stats["workspaces"]
    return {"unchanged": unchanged, "edit": cpu / edits, "lean": entry.get("lean")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path, default=REPO)
    parser.add_argument("--sizes", default="100,10000,50000")
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--edits", type=int, default=100)
    options = parser.parse_args()
    print(f"tree {options.tree}")
    for lines in (int(size) for size in options.sizes.split(",")):
        found = measure(options.tree.resolve(), lines, options.calls, options.edits)
        print(
            f"{lines:>6} lines: server CPU per unchanged hover {found['unchanged']:.3f} ms,"
            f" per one-line edit {found['edit']:.3f} ms; lean {found['lean']}"
        )


if __name__ == "__main__":
    main()
