"""A `lean-beam-mcp` of some source tree, against this checkout's fake Lean, driven over pipes.

Shared by the benchmarks that compare trees (`cost.py`, `idle.py`): the server runs with the
tree's own directory first on ``sys.path``, so two trees see the same fake Lean; ``cpu_ms`` is the
server process's own CPU time (user + system from ``psutil``; the fake Lean is a child process
and is not counted).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
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


class Server:
    """``lean-beam-mcp`` of ``tree``; ``ask`` waits for the answer and insists it is no error."""

    def __init__(self, tree: Path, *flags: str, prefix: Sequence[str] = (), **env: str) -> None:
        """``prefix`` runs the server under another command (``valgrind ...``)."""
        self.tree = tree
        args = flags or ("--lean-cmd", FAKE_CMD)
        self.proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", "beam_mcp", *args],
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
        return float(times.user + times.system) * 1000

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


class Callgrind:
    """A server run under ``valgrind --tool=callgrind``: ``read()`` is the number of
    instructions it executed so far (each read dumps the counters since the last one)."""

    def __init__(self, tree: Path, **env: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="beam-callgrind-"))
        out = f"--callgrind-out-file={self.dir / 'out'}"
        # the same hash seed in every run: the same dict layouts, the same work
        self.server = Server(
            tree, prefix=("valgrind", "--tool=callgrind", out), PYTHONHASHSEED="0", **env
        )
        self.total = 0
        self.dumps = 0

    def read(self) -> float:
        self.dumps += 1
        subprocess.run(
            ["callgrind_control", f"--dump=d{self.dumps}", str(self.server.proc.pid)],
            capture_output=True,
            check=True,
            timeout=300,
        )
        dump = self.dir / f"out.{self.dumps}"
        found = re.search(r"^(?:summary|totals): (\d+)", dump.read_text(), re.MULTILINE)
        assert found is not None, dump
        self.total += int(found.group(1))
        return float(self.total)

    def close(self) -> None:
        self.server.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def valgrind_missing() -> bool:
    return shutil.which("valgrind") is None or shutil.which("callgrind_control") is None
