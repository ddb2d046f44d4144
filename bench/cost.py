"""Server CPU per call against file size, for one source tree of lean-beam.

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
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from driver import Server  # noqa: E402


def project(lines: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="beam-cost-"))
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "Big.lean").write_text(body(lines, 0))
    return root


def body(lines: int, serial: int) -> str:
    middle = lines // 2
    return "".join(f"def d{i} : Nat := {serial if i == middle else i}\n" for i in range(lines))


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
