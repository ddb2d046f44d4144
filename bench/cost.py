"""Server CPU per call against file size, for one or more source trees of lean-beam.

For each size (lines of ``Big.lean``) and each ``--tree`` (default: this checkout), a fresh
``lean-beam-mcp`` of that tree runs against the fake Lean of *this* checkout, so all trees see
the same fake (``--host off``: the broker in the server process, so that its CPU is all of
the work; by default a tree with the shared host does the Lean side in the host):

- unchanged: ``lean_hover`` on the unchanged file, ``--calls`` times;
- one-line edit: one line in the middle of the file rewritten on disk, then ``lean_update``
  (which sends the edit to Lean), ``--edits`` times, then 1 s for Lean's answers to arrive and be
  handled (they are counted too);
- edit then sync: the same edit, then ``lean_sync`` (which waits for Lean's answers and reports
  the file's diagnostics), ``--syncs`` times;

and prints the server process's own CPU time per call: user + system from ``psutil`` (whole
clock ticks, 10 ms here, so many calls) and the on-CPU time of its threads from
``/proc/<pid>/task/*/schedstat`` (nanoseconds; threads that end during the loop would be missed,
and none does), plus the ``lean`` counters of ``beam_stats`` when the tree has them. With several
trees they run in turns for each size (``--rounds`` times), so they share the machine's moods.
With ``--instructions`` the same loops run under ``valgrind --tool=callgrind`` and print the
instructions the server executed per call instead: user space only, and not moved by the
machine's load (Lean then reports progress only when it is done, so every edit brings the same
answers). Run:
``.venv-test/bin/python bench/cost.py [--tree PATH ...] [--sizes 100,20000,50000]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from driver import Callgrind, Server, valgrind_missing  # noqa: E402
from first_call import thread_cpu_ms  # noqa: E402


def project(lines: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="beam-cost-"))
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "Big.lean").write_text(body(lines, 0))
    return root


def body(lines: int, serial: int) -> str:
    middle = lines // 2
    return "".join(f"def d{i} : Nat := {serial if i == middle else i}\n" for i in range(lines))


def _cpu(server: Server) -> tuple[float, ...]:
    return server.cpu_ms(), thread_cpu_ms(server.proc.pid)


def _per_call(before: tuple[float, ...], after: tuple[float, ...], n: int) -> tuple[float, ...]:
    return tuple((b - a) / n for a, b in zip(before, after, strict=True))


def measure(
    server: Server,
    lines: int,
    calls: int,
    edits: int,
    read: Callable[[], tuple[float, ...]],
    syncs: int = 0,
) -> dict[str, Any]:
    """Per call of each loop, what ``read`` counts; the server is closed afterwards."""
    root = project(lines)
    ws = {"workspace": {"root": str(root)}, "path": "Big.lean"}
    version = server.ask("lean_sync", ws)["version"]
    hover = {**ws, "version": version, "line": 0, "character": 4}
    for _ in range(20):
        server.ask("lean_hover", hover)
    time.sleep(2.5)  # past the racy window of the last write
    start = read()
    for _ in range(calls):
        server.ask("lean_hover", hover)
    unchanged = _per_call(start, read(), calls)
    big = root / "Big.lean"
    texts = [body(lines, -1), body(lines, -2)]
    for serial in range(4):  # the edited command is elaborated once per text
        big.write_text(texts[serial % 2])
        server.ask("lean_update", ws)
    time.sleep(1.0)
    start = read()
    for serial in range(edits):
        big.write_text(texts[serial % 2])
        server.ask("lean_update", ws)
    time.sleep(1.0)  # Lean's answers to the last edit arrive and are handled
    edit = _per_call(start, read(), edits)
    synced = None
    if syncs:
        start = read()
        for serial in range(syncs):
            big.write_text(texts[serial % 2])
            server.ask("lean_sync", ws)
        synced = _per_call(start, read(), syncs)
    stats = server.ask("beam_stats", {})
    (entry,) = stats["workspaces"]
    return {"unchanged": unchanged, "edit": edit, "sync": synced, "lean": entry.get("lean")}


def cpu(
    tree: Path, lines: int, calls: int, edits: int, syncs: int, env: dict[str, str]
) -> dict[str, Any]:
    server = Server(tree, **env)
    try:
        return measure(server, lines, calls, edits, lambda: _cpu(server), syncs)
    finally:
        server.close()


def instructions(
    tree: Path, lines: int, calls: int, edits: int, syncs: int, env: dict[str, str]
) -> dict[str, Any]:
    # Lean reports no progress while it works (only when done): the same answers per edit,
    # however long the elaboration takes beside the slowed-down server.
    counted = Callgrind(tree, FAKE_LEAN_REPORT_DELAY_MS="600000", **env)
    try:
        return measure(counted.server, lines, calls, edits, lambda: (counted.read(),), syncs)
    finally:
        counted.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", help="default: this checkout")
    parser.add_argument("--sizes", default="100,20000,50000")
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--syncs", type=int, default=0, help="edit-then-sync calls (0: none)")
    parser.add_argument(
        "--host", default=None, help="LEAN_BEAM_HOST for the servers (off: in-process)"
    )
    parser.add_argument("--instructions", action="store_true", help="under callgrind instead")
    options = parser.parse_args()
    trees = [t.resolve() for t in options.tree or [REPO]]
    env = {} if options.host is None else {"LEAN_BEAM_HOST": options.host}
    if options.instructions:
        if valgrind_missing():
            raise SystemExit("--instructions needs valgrind (callgrind and callgrind_control)")
        unit = "thousand instructions per call (callgrind)"
    else:
        unit = "server CPU per call, ms: psutil user+system (10 ms ticks) / schedstat of threads"
    print(f"{unit} (load {psutil.getloadavg()[0]:.1f} at the start)")
    run = instructions if options.instructions else cpu
    for lines in (int(size) for size in options.sizes.split(",")):
        for round_ in range(1, options.rounds + 1):
            for tree in trees:
                found = run(tree, lines, options.calls, options.edits, options.syncs, env)
                hover, edit = found["unchanged"], found["edit"]
                if options.instructions:
                    figures = f"{hover[0] / 1e3:.1f}, one-line edit {edit[0] / 1e3:.1f}"
                else:
                    figures = (
                        f"{hover[0]:.3f} / {hover[1]:.3f},"
                        f" one-line edit {edit[0]:.3f} / {edit[1]:.3f}"
                    )
                if found["sync"] is not None:
                    synced = found["sync"]
                    figures += ", edit then sync " + " / ".join(f"{x:.3f}" for x in synced)
                print(
                    f"{lines:>6} lines, round {round_}, {tree}: unchanged hover {figures};"
                    f" lean {found['lean']}",
                    flush=True,
                )
    print(f"load {psutil.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
