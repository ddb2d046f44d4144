"""A scripted agent session against the fake Lean, and what it made Lean do.

One session per size: ``lean_sync`` of ``Main.lean`` (filler definitions, then a proof), 20
``lean_run_at`` probes at 5 positions of the proof with ``lean_goals`` after each, 3 edits on
disk each followed by ``lean_sync``, then ``lean_save`` (through the fake ``lake``). Prints the
wall time of each phase and the ``lean`` counters of ``beam_stats``; workers and full-text
sends are what real Lean pays for in seconds and gigabytes. Run:
``.venv-test/bin/python bench/agent.py [--tree PATH] [--sizes 100,10000,50000]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.driver import FAKE_ENV, Server  # noqa: E402

PROOF = (
    "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
    "  constructor\n"
    "  exact hp\n"
    "  exact hq\n"
)
PROBES = ["skip", "constructor", "exact hp", "exact hq", "trivial"]


def project(lines: int) -> tuple[Path, int]:
    root = Path(tempfile.mkdtemp(prefix="beam-agent-"))
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "lakefile.toml").write_text('name = "proj"\ndefaultTargets = ["Main"]\n')
    filler = "".join(f"def d{i} : Nat := {i}\n" for i in range(lines))
    (root / "Main.lean").write_text(filler + PROOF)
    return root, lines


def lake_server(tree: Path) -> Server:
    """The server through ``beam-cli mcp-config`` with the fake ``lake`` first on PATH."""
    beam_cli = shutil.which("beam-cli", path=os.path.dirname(sys.executable))
    assert beam_cli is not None, "beam-cli is not installed next to this interpreter"
    path = f"{REPO / 'tests' / 'fake_lean' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    return Server(tree, "--beam-cli", beam_cli, PATH=path, PYTHONPATH=f"{tree}:{REPO}")


def session(tree: Path, lines: int) -> dict[str, Any]:
    root, first = project(lines)
    server = lake_server(tree)
    ws = {"workspace": {"root": str(root)}, "path": "Main.lean"}
    phases: dict[str, float] = {}
    try:
        clock = time.perf_counter()
        version = server.ask("lean_sync", ws)["version"]
        phases["sync"] = time.perf_counter() - clock
        clock = time.perf_counter()
        for probe in range(20):
            line, text = first + 1 + probe % 3, PROBES[probe % 5]
            where = {**ws, "version": version, "line": line, "character": 2}
            server.ask("lean_run_at", {**where, "text": text})
            server.ask("lean_goals", {**where, "mode": "after"})
        phases["20 probes + goals"] = time.perf_counter() - clock
        clock = time.perf_counter()
        main = root / "Main.lean"
        for edit in range(3):
            main.write_text(main.read_text() + f"-- note {edit}\n")
            version = server.ask("lean_sync", ws)["version"]
        phases["3 edits"] = time.perf_counter() - clock
        clock = time.perf_counter()
        server.ask("lean_save", ws)
        phases["save"] = time.perf_counter() - clock
        stats = server.ask("beam_stats", {})
    finally:
        server.close()
    (entry,) = stats["workspaces"]
    return {"phases": phases, "lean": entry.get("lean")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path, default=REPO)
    parser.add_argument("--sizes", default="100,10000,50000")
    options = parser.parse_args()
    print(f"tree {options.tree} (fake: {FAKE_ENV})")
    for lines in (int(size) for size in options.sizes.split(",")):
        found = session(options.tree.resolve(), lines)
        wall = ", ".join(
            f"{name} {seconds * 1000:.0f} ms" for name, seconds in found["phases"].items()
        )
        print(f"{lines:>6} filler lines: {wall}; lean {found['lean']}")


if __name__ == "__main__":
    main()
