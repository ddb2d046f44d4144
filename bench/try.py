"""``lean_try`` benchmarks against the fake Lean server.

Time: 8 tactics × 2 positions. Every tactic carries ``sleep 100`` (the fake charges it as
elaboration time), so one pair costs about 100 ms plus the broker's round trips. Measured: the
sum of the same 16 pairs sent one by one with ``lean_run_at``, and one ``lean_try`` call with the
process cap at 2 (the default), 4 and 8 scratch documents.

Size: the largest grid a call takes, 32 tactics × 16 positions (512 pairs) over sixteen small
proofs, against the default 20,000-byte result budget. Printed: the bytes of the answer's text,
how many of the 512 pairs it accounts for, and what the byte budget cut (``truncated``).

Run: ``.venv-test/bin/python bench/try.py [--only time|size]``. Figures go to
docs/PERFORMANCE.md.
"""

from __future__ import annotations

import argparse
import json
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


# Sixteen proofs of four kinds; the position is each proof's `sorry`.
KINDS = (
    "(p q : Prop) (hp : p) (hq : q) : p ∧ q",
    "(n : Nat) : n + {i} = {i} + n",
    "(p q : Prop) (hq : q) (hpq : q → p) : p",
    "(p q r : Prop) (hp : p) (hq : q) (hr : r) : p ∧ q ∧ r",
)
GRID_TACTICS = [
    "constructor",
    "trivial",
    "assumption",
    "simp",
    "rfl",
    "omega",
    "norm_num",
    "decide",
    "exact hp",
    "exact hq",
    "exact hr",
    "exact hpq",
    "exact trivial",
    "exact rfl",
    "exact foo",
    "intro h",
    "apply hpq",
    "apply hp",
    "refine hpq",
    "exact?",
    "apply?",
    "simp?",
    "rw [hpq]",
    "skip",
    "constructor\nexact hp\nexact hq",
    "simp_all",
    "aesop",
    "tauto",
    "linarith",
    "unfold f",
    "cases hp",
    "induction n",
]


def grid_source() -> tuple[str, list[dict[str, int]]]:
    lines: list[str] = []
    positions = []
    for i in range(16):
        signature = KINDS[i % len(KINDS)].format(i=i)
        lines.append(f"theorem g{i} {signature} := by")
        positions.append({"line": len(lines), "character": 2})
        lines.append("  sorry")
    return "\n".join(lines) + "\n", positions


def pairs_reported(body: dict[str, Any]) -> int:
    """How many pairs the answer accounts for (ran, failed or skipped), in either answer shape."""
    if "results" in body:  # one entry per pair
        return len(body["results"]) + len(body["skipped"])
    return sum(
        len(group["tactics"])
        for spot in body["positions"]
        for kind in ("succeeded", "failed", "skipped")
        for group in spot[kind]
    )


def grid_size(root: Path, budget: int | None) -> None:
    """One 512-pair call; ``budget`` None: the default ``--result-bytes``."""
    text, positions = grid_source()
    (root / "Grid.lean").write_text(text)
    flags = ["--scratch-per-process", "4"]
    flags += [] if budget is None else ["--result-bytes", str(budget)]
    server = Server("--lean-cmd", FAKE_CMD, *flags, env=minimal_env(**FAST_FAKE))
    ws = {"workspace": {"root": str(root)}}
    args = {**ws, "path": "Grid.lean", "positions": positions, "tactics": GRID_TACTICS}
    server.send(call(1, "lean_try", args))
    reply = server.read_until(1, timeout=600)[0]
    server.close()
    assert reply["result"]["isError"] is False, reply
    body = structured(reply)
    size = len(reply["result"]["content"][0]["text"].encode("utf-8"))
    cut = json.dumps(body.get("truncated", {}), ensure_ascii=False)
    left = json.dumps(body.get("omitted", {}))
    label = "default budget" if budget is None else f"budget {budget}"
    print(
        f"lean_try 32 x 16 = 512 pairs, {label}: {size} bytes of text, "
        f"{pairs_reported(body)} pairs accounted for, truncated: {cut}, omitted: {left}"
    )


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
        assert pairs_reported(result) == len(POSITIONS) * len(TACTICS)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", choices=("time", "size"))
    only = parser.parse_args().only
    root = Path(tempfile.mkdtemp(prefix="beam-bench-try-"))
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "Main.lean").write_text(PROOF)
    if only != "time":
        grid_size(root, None)
        grid_size(root, 10_000_000)  # what the whole answer weighs
        grid_size(root, 8_000)  # a tighter budget: what the answer leaves out
    if only == "size":
        return
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
