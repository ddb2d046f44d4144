"""Speculative execution benchmark against the fake Lean server.

1. Twenty ``lean_run_at`` probes at one tactic position near the end of a 1,000-line file: the
   first one (the scratch document is opened and elaborated from scratch) against the median of
   the other nineteen (only the changed tail is elaborated again: prefix reuse).
2. Eight ``lean_run_at`` probes sent at once at that position, with the default pool (one
   scratch document per source document: they queue) and with four scratch documents.

The fake charges ``FAKE_LEAN_CMD_DELAY_MS`` (1 ms here) per freshly elaborated command, and each
probe below carries ``sleep 20`` so that the parallel case has elaboration to overlap.

Run: ``.venv-test/bin/python bench/speculative.py``. Figures go to docs/PERFORMANCE.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.broker.fake import FAKE_CMD, FAST_FAKE  # noqa: E402
from tests.mcp.helpers import Server, call, minimal_env, structured  # noqa: E402

PROOF = "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  constructor\n  exact hp\n"
TEXTS = [
    "sleep 20\nconstructor",
    "sleep 20\nskip",
    "sleep 20\nconstructor\nexact hp",
    "sleep 20\ntrivial",
]


def _project(lines: int) -> tuple[Path, int]:
    root = Path(tempfile.mkdtemp(prefix="beam-bench-spec-"))
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    body = "".join(f"def d{i} : Nat := {i}\n" for i in range(lines - 3))
    (root / "Big.lean").write_text(body + PROOF)
    return root, lines - 2  # the line of `constructor`


class Bench:
    def __init__(self, root: Path, line: int, *flags: str) -> None:
        self.server = Server("--lean-cmd", FAKE_CMD, *flags, env=minimal_env(**FAST_FAKE))
        self.ws = {"workspace": {"root": str(root)}}
        self.line = line
        self.rid = 0
        sync = self.ask("lean_sync", {"path": "Big.lean"})
        self.version = sync["version"]

    def ask(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        self.rid += 1
        reply = self.server.ask(call(self.rid, tool, {**self.ws, **args}))
        assert reply["result"]["isError"] is False, reply
        return structured(reply)

    def probe_args(self, text: str) -> dict[str, Any]:
        return {
            **self.ws,
            "path": "Big.lean",
            "version": self.version,
            "line": self.line,
            "character": 2,
            "text": text,
        }

    def sequential(self, count: int) -> list[float]:
        times = []
        for index in range(count):
            start = time.perf_counter()
            result = self.ask("lean_run_at", self.probe_args(TEXTS[index % len(TEXTS)]))
            times.append((time.perf_counter() - start) * 1000)
            assert result["proof_state"] is not None, result
        return times

    def concurrent(self, count: int) -> float:
        ids = []
        start = time.perf_counter()
        for index in range(count):
            self.rid += 1
            ids.append(self.rid)
            text = TEXTS[index % len(TEXTS)]
            self.server.send(call(self.rid, "lean_run_at", self.probe_args(text)))
        pending = set(ids)
        while pending:
            message = self.server.read(120)
            if message.get("id") in pending and "method" not in message:
                assert message["result"]["isError"] is False, message
                pending.discard(message["id"])
        return (time.perf_counter() - start) * 1000

    def close(self) -> None:
        self.server.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--probes", type=int, default=20)
    options = parser.parse_args()
    root, line = _project(options.lines)

    bench = Bench(root, line)
    try:
        times = bench.sequential(options.probes)
        queued = bench.concurrent(8)
    finally:
        bench.close()
    first, rest = times[0], statistics.median(times[1:])
    print(f"{options.probes} probes at {line}:2 of a {options.lines}-line file")
    print(
        f"  first {first:.1f} ms, median of the rest {rest:.1f} ms "
        f"({100 * rest / first:.1f}% of the first), max of the rest {max(times[1:]):.1f} ms"
    )
    print(f"8 concurrent probes, pool 1 per document: {queued:.1f} ms wall")

    wide = Bench(root, line, "--scratch-per-document", "4")
    try:
        cold = wide.concurrent(8)  # opens (and elaborates) up to four scratch documents
        parallel = wide.concurrent(8)
    finally:
        wide.close()
    print(
        f"8 concurrent probes, pool 4 per document: {cold:.1f} ms wall while the scratch "
        f"documents open, then {parallel:.1f} ms warm"
    )


if __name__ == "__main__":
    main()
