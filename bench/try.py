"""``lean_try`` benchmark against the fake Lean server: 8 tactics × 2 positions.

Every tactic carries ``sleep 100`` (the fake charges it as elaboration time), so one pair costs
about 100 ms plus the broker's round trips. Measured: the sum of the same 16 pairs sent one by
one with ``lean_run_at``, and one ``lean_try`` call with the process cap at 2 (the default), 4
and 8 scratch documents.

Run: ``.venv-test/bin/python bench/try.py``. Figures go to docs/PERFORMANCE.md.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.broker.fake import FAKE_CMD, FAST_FAKE  # noqa: E402
from tests.mcp.helpers import Server, call, minimal_env, structured  # noqa: E402

PROOF = (
    "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
    "  constructor\n"
    "  exact hp\n"
    "  exact hq\n"
)
POSITIONS = [{"line": 1, "character": 2}, {"line": 2, "character": 2}]
TACTICS = [
    f"sleep 100\n{t}"
    for t in (
        "constructor",
        "exact hp",
        "exact hq",
        "trivial",
        "skip",
        "assumption",
        "simp",
        "norm_num",
    )
]


class Bench:
    def __init__(self, root: Path, *flags: str) -> None:
        self.server = Server("--lean-cmd", FAKE_CMD, *flags, env=minimal_env(**FAST_FAKE))
        self.ws = {"workspace": {"root": str(root)}}
        self.rid = 0
        self.version = self.ask("lean_sync", {"path": "Main.lean"})["version"]

    def ask(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        self.rid += 1
        self.server.send(call(self.rid, tool, {**self.ws, **args}))
        reply = self.server.read_until(self.rid, timeout=300)[0]
        assert reply["result"]["isError"] is False, reply
        return structured(reply)

    def one_by_one(self) -> float:
        start = time.perf_counter()
        for position in POSITIONS:
            for text in TACTICS:
                self.ask(
                    "lean_run_at",
                    {"path": "Main.lean", "version": self.version, **position, "text": text},
                )
        return time.perf_counter() - start

    def together(self) -> float:
        start = time.perf_counter()
        result = self.ask(
            "lean_try", {"path": "Main.lean", "positions": POSITIONS, "tactics": TACTICS}
        )
        assert len(result["results"]) == len(POSITIONS) * len(TACTICS)
        return time.perf_counter() - start


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="beam-bench-try-"))
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "Main.lean").write_text(PROOF)
    bench = Bench(root)
    bench.one_by_one()  # warm: scratch document open, prefix elaborated
    print(f"16 x lean_run_at one by one: {bench.one_by_one() * 1000:.0f} ms")
    bench.server.close()
    for cap in (2, 4, 8):
        bench = Bench(root, "--scratch-per-process", str(cap))
        bench.together()
        print(f"lean_try 8 x 2, process cap {cap}: {bench.together() * 1000:.0f} ms")
        bench.server.close()


if __name__ == "__main__":
    main()
