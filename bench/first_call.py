"""What the first Lean tool call costs the server, over a `beam_version` call.

Each sample is a fresh ``lean-beam-mcp`` of a source tree, against the fake Lean of *this*
checkout (so two trees see the same fake), driven through real pipes with modern MCP:

- ``beam_version``: start, one ``beam_version`` call, its answer read;
- ``lean_hover`` / ``lean_sync``: start, one such call on a small project, its answer read;

in each host mode asked (``--host off``: the broker in the server's own process; ``--host
auto``: the workspace on its shared Lean host, which one warm-up call per tree has started, so
every sample is an agent whose host already runs). Then the server process's own CPU time is
read (the fake Lean and the host are other processes and are not counted): user + system from
``psutil`` (whole clock ticks, 10 ms here), and the on-CPU time of its threads from
``/proc/<pid>/task/*/schedstat`` (nanoseconds; every thread of the server is still alive
then). It prints medians (with the psutil mean and the schedstat minimum) over ``--runs``
samples of each, and the difference of each Lean call over ``beam_version`` (target: at most
50 ms). With several ``--tree`` options the trees are sampled in alternating rounds, so they
share the machine's moods. Run:
``.venv-test/bin/python bench/first_call.py [--tree PATH ...] [--runs N] [--host MODE ...]
[--instructions N]``.

CPU time on a shared machine moves with its load (caches, the other hyperthread). With
``--instructions N`` each tree and call is also run N times under ``valgrind --tool=callgrind``
(about 50 times slower), and the instructions the server executed up to the answer are
printed: a figure the neighbours do not move (user space only: page faults, ``fork`` and other
kernel work are not in it; compare trees, not absolute milliseconds).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
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
from tests.support.hosts import host_processes  # noqa: E402

FAKE_CMD = shlex.join(
    ["/usr/bin/env", f"PYTHONPATH={REPO}", sys.executable, "-m", "tests.fake_lean"]
)
FAKE_ENV = {"FAKE_LEAN_REPORT_DELAY_MS": "5", "FAKE_LEAN_CMD_DELAY_MS": "0"}
SOURCE = "theorem t : 1 + 1 = 2 := by\n  rfl\n\ndef answer : Nat := 42\n"
KINDS = ("beam_version", "lean_hover", "lean_sync")


def project() -> Path:
    root = Path(tempfile.mkdtemp(prefix="beam-first-"))
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "Main.lean").write_text(SOURCE)
    return root


def arguments(kind: str, root: Path) -> dict[str, Any]:
    if kind == "beam_version":
        return {}
    ws: dict[str, Any] = {"workspace": {"root": str(root)}, "path": "Main.lean"}
    if kind == "lean_hover":
        ws.update(line=3, character=4)
    return ws


def thread_cpu_ms(pid: int) -> float:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        total += int((task / "schedstat").read_text().split()[0])
    return total / 1e6


def watchdog(server: psutil.Process) -> tuple[float, float]:
    """RSS (MiB) and CPU (ms) of the server's watchdog once it has settled; NaN without one."""
    for child in server.children():
        line = " ".join(child.cmdline())
        if "lean-beam-watchdog" in line or "reaper.py" in line:
            before = -1.0
            for _ in range(40):  # a Python watchdog takes a while to start: wait until idle
                times = child.cpu_times()
                spent = (times.user + times.system) * 1000
                if spent == before:
                    break
                before = spent
                time.sleep(0.05)
            return child.memory_info().rss / 2**20, spent
    return float("nan"), float("nan")


def sample(tree: Path, kind: str, root: Path, host: str) -> tuple[float, ...]:
    """Server CPU (ms: psutil, schedstat) of a fresh server: start, one `kind` call, answer;
    then its watchdog's RSS (MiB) and CPU (ms)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "beam_mcp", "--lean-cmd", FAKE_CMD],
        cwd=tree,
        env=minimal_env(**{"PYTHONPATH": str(tree), **FAKE_ENV, "LEAN_BEAM_HOST": host}),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    ps = psutil.Process(proc.pid)
    try:
        proc.stdin.write(json.dumps(call(1, kind, arguments(kind, root))).encode() + b"\n")
        proc.stdin.flush()
        while True:
            reply = json.loads(proc.stdout.readline())
            if reply.get("id") == 1:
                break
        times = ps.cpu_times()
        precise = thread_cpu_ms(proc.pid)
        assert reply["result"]["isError"] is False, reply
        return ((times.user + times.system) * 1000, precise, *watchdog(ps))
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def instructions(tree: Path, kind: str, root: Path, host: str) -> int:
    """Instructions a fresh server under callgrind executed until the answer to one call."""
    out = Path(tempfile.mkdtemp(prefix="beam-callgrind-")) / "out"
    proc = subprocess.Popen(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "beam_mcp",
            "--lean-cmd",
            FAKE_CMD,
        ],
        cwd=tree,
        # the same hash seed in every run: the same dict layouts, the same work
        env=minimal_env(
            **{"PYTHONPATH": str(tree), **FAKE_ENV, "PYTHONHASHSEED": "0", "LEAN_BEAM_HOST": host}
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(call(1, kind, arguments(kind, root))).encode() + b"\n")
        proc.stdin.flush()
        while json.loads(proc.stdout.readline()).get("id") != 1:
            pass
        dump = ["callgrind_control", "--dump=answer", str(proc.pid)]
        subprocess.run(dump, capture_output=True, check=True, timeout=120)
    finally:
        proc.stdin.close()
        proc.wait(timeout=300)
    (first,) = [f for f in out.parent.iterdir() if f.name.endswith(".1")]
    found = re.search(r"^(?:summary|totals): (\d+)", first.read_text(), re.MULTILINE)
    assert found is not None, first
    shutil.rmtree(out.parent)
    return int(found.group(1))


def _instruction_figures(trees: list[Path], root: Path, runs: int, host: str) -> None:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("instructions: valgrind is not installed here")
        return
    found: dict[tuple[Path, str], list[int]] = {(t, k): [] for t in trees for k in KINDS}
    for _ in range(runs):
        for tree in trees:
            for kind in KINDS:
                found[tree, kind].append(instructions(tree, kind, root, host))
    print(
        f"--host {host}: instructions executed by the server up to the answer "
        f"(callgrind, median of {runs}):"
    )
    for tree in trees:
        base = statistics.median(found[tree, "beam_version"])
        print(f"tree {tree}")
        for kind in KINDS:
            got = statistics.median(found[tree, kind])
            extra = "" if kind == "beam_version" else f" | {(got - base) / 1e6:+8.1f} M over it"
            print(f"  {kind:13} {got / 1e6:8.1f} M{extra}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", help="default: this checkout")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--host", action="append", choices=("off", "auto"), help="default: off, then auto"
    )
    parser.add_argument("--instructions", type=int, default=0, metavar="N")
    options = parser.parse_args()
    trees = [t.resolve() for t in options.tree or [REPO]]
    # Hosts of this run live in a socket directory of their own, stopped at the end.
    sockets = tempfile.mkdtemp(prefix="beam-first-run-")
    os.environ["XDG_RUNTIME_DIR"] = sockets
    root = project()
    try:
        for host in options.host or ["off", "auto"]:
            _mode(trees, root, host, options.runs, options.instructions)
    finally:
        for process in host_processes([sockets]):
            process.kill()
    return 0


def _mode(trees: list[Path], root: Path, host: str, runs: int, instructions: int) -> None:
    if host == "auto":
        for tree in trees:  # start each tree's host: every sample then finds it running
            sample(tree, "lean_sync", root, host)
    found: dict[tuple[Path, str], list[tuple[float, ...]]] = {
        (t, k): [] for t in trees for k in KINDS
    }
    for _ in range(runs):
        for tree in trees:
            for kind in KINDS:
                found[tree, kind].append(sample(tree, kind, root, host))
                time.sleep(0.05)
    load = psutil.getloadavg()[0]
    print(f"--host {host}: server CPU over {runs} fresh servers each (load {load:.1f}), in ms:")
    print("  psutil user+system median (mean) | schedstat median (min) | differences: the same")
    for tree in trees:
        print(f"tree {tree}")
        base = _figures(found[tree, "beam_version"])
        for kind in KINDS:
            got = _figures(found[tree, kind])
            line = f"  {kind:13} {got[0]:6.1f} ({got[1]:6.1f}) | {got[2]:6.1f} ({got[3]:6.1f})"
            if kind != "beam_version":
                ticks = f"{got[0] - base[0]:+6.1f} ({got[1] - base[1]:+6.1f})"
                line += f" | {ticks} | {got[2] - base[2]:+6.1f} ({got[3] - base[3]:+6.1f})"
            print(line)
        if host == "off":  # on a host the watchdog is the host's child, not the server's
            dogs = [s for k in KINDS[1:] for s in found[tree, k]]
            rss = statistics.median(s[2] for s in dogs)
            spent = statistics.median(s[3] for s in dogs)
            print(f"  its watchdog, median: {rss:.1f} MiB resident, {spent:.0f} ms CPU (ticks)")
    if instructions:
        _instruction_figures(trees, root, instructions, host)


def _figures(samples: list[tuple[float, ...]]) -> tuple[float, float, float, float]:
    ticks = [s[0] for s in samples]
    precise = [s[1] for s in samples]
    return (
        statistics.median(ticks),
        statistics.mean(ticks),
        statistics.median(precise),
        min(precise),
    )


if __name__ == "__main__":
    raise SystemExit(main())
