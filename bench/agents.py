"""Many agents on one project, with and without the shared Lean host, against the fake Lean.

For 1, 2, 4 and 8 agents (separate ``lean-beam-mcp`` processes, run side by side), each agent
syncs ``Main.lean`` and runs 10 probes (``lean_run_at`` at the proof's positions); then one more
agent arrives late and asks ``lean_goals``. Every size runs twice from the same run: with
``LEAN_BEAM_HOST=off`` (every agent its own Lean) and with the default shared host. Printed per
size and mode:

- ``lean started``: distinct fake Lean processes seen (language servers and file workers,
  sampled every 20 ms), the count real Lean pays for in seconds and gigabytes each;
- ``peak MiB`` / ``end MiB``: the summed PSS of those processes, at its highest while the agents
  worked and once they had finished (each fake worker holds ``--private-mb`` of its own and maps
  a ``--shared-mb`` file every worker shares, as real workers map the same ``.olean`` files);
- ``first ms``: the slowest first call (``lean_sync``) of the agents that start together, which
  starts Lean (and, shared, the host);
- ``late ms``: the late agent's first call, from its request to its answer (its process already
  running: what the agent waits for on its first Lean call);
- ``wall s``: the whole size's run.

The fake's costs are its knobs (``FAKE_LEAN_INIT_DELAY_MS`` for loading the workspace,
``FAKE_LEAN_CMD_DELAY_MS`` per elaborated command), not real Lean's. Run:
``.venv-test/bin/python bench/agents.py [--agents 1,2,4,8] [--probes 10]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.driver import Server  # noqa: E402

PROOF_AT = 40  # the proof's first tactic line, after the filler definitions
TACTICS = ["skip", "constructor", "exact hp", "exact hq", "trivial"]


def project(base: Path) -> Path:
    root = base / "proj"
    root.mkdir()
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "lakefile.toml").write_text('name = "proj"\n')
    filler = "".join(f"def d{i} : Nat := {i}\n" for i in range(PROOF_AT - 2))
    proof = (
        "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
        "  constructor\n  exact hp\n  exact hq\n"
    )
    (root / "Main.lean").write_text("import Mathlib\n" + filler + proof)
    return root.resolve()


class Sampler(threading.Thread):
    """Every fake Lean process of the project, sampled: pids seen, and the peak summed PSS."""

    def __init__(self, root: Path) -> None:
        super().__init__(daemon=True)
        self.root = str(root)
        self.seen: set[int] = set()
        self.peak = 0
        self.stopped = threading.Event()

    def processes(self) -> list[psutil.Process]:
        found = []
        for process in psutil.process_iter(["cmdline", "cwd"]):
            try:
                command = " ".join(process.info["cmdline"] or [])
                if "fake_lean" in command and process.info["cwd"] == self.root:
                    found.append(process)
            except psutil.Error:
                continue
        return found

    def pss(self) -> int:
        total = 0
        for process in self.processes():
            try:
                with open(f"/proc/{process.pid}/smaps_rollup", "rb") as handle:
                    for line in handle:
                        if line.startswith(b"Pss:"):
                            total += int(line.split()[1]) * 1024
            except OSError:
                continue
        return total

    def run(self) -> None:
        while not self.stopped.is_set():
            self.seen.update(p.pid for p in self.processes())
            self.peak = max(self.peak, self.pss())
            time.sleep(0.02)


def one_agent(server: Server, root: Path, probes: int, first: list[float]) -> None:
    ws = {"workspace": {"root": str(root)}, "path": "Main.lean"}
    clock = time.perf_counter()
    server.ask("lean_sync", ws)
    first.append((time.perf_counter() - clock) * 1000)
    for index in range(probes):
        line = PROOF_AT + index % 3
        server.ask("lean_run_at", {**ws, "line": line, "character": 2, "text": TACTICS[index % 5]})


def run(mode: str, count: int, probes: int, env: dict[str, str]) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="ba", dir="/tmp"))  # short: the socket lives here
    root = project(base)
    sandbox = {**env, "XDG_RUNTIME_DIR": str(base / "run"), "LEAN_BEAM_HOST": mode}
    (base / "run").mkdir()
    sampler = Sampler(root)
    sampler.start()
    started = time.perf_counter()
    agents = [Server(REPO, **sandbox) for _ in range(count)]
    late: Server | None = None
    firsts: list[float] = []
    try:
        for agent in agents:
            agent.ask("beam_version", {})  # every process is up before the clock starts
        workers = [
            threading.Thread(target=one_agent, args=(a, root, probes, firsts)) for a in agents
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        late = Server(REPO, **sandbox)
        late.ask("beam_version", {})  # the process is up; now time its first Lean call
        clock = time.perf_counter()
        late.ask(
            "lean_goals",
            {"workspace": {"root": str(root)}, "path": "Main.lean", "line": PROOF_AT,
             "character": 2, "mode": "before"},
        )  # fmt: skip
        late_ms = (time.perf_counter() - clock) * 1000
        end = sampler.pss()
    finally:
        sampler.stopped.set()
        sampler.join()
        for agent in [*agents, *([late] if late else [])]:
            agent.close()
        _stop_hosts(base / "run")
        shutil.rmtree(base, ignore_errors=True)
    return {
        "mode": mode,
        "agents": count,
        "lean_started": len(sampler.seen),
        "peak_mib": sampler.peak / (1 << 20),
        "end_mib": end / (1 << 20),
        "first_ms": max(firsts),
        "late_ms": late_ms,
        "wall_s": time.perf_counter() - started,
    }


def _stop_hosts(directory: Path) -> None:
    from beam_runtime.host.listing import live_hosts, stop_hosts

    stop_hosts(live_hosts(str(directory / "lean-beam")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", default="1,2,4,8")
    parser.add_argument("--probes", type=int, default=10)
    parser.add_argument("--private-mb", type=int, default=32)
    parser.add_argument("--shared-mb", type=int, default=96)
    parser.add_argument("--init-ms", type=int, default=1000, help="the fake's workspace load")
    parser.add_argument("--cmd-ms", type=int, default=20, help="the fake's cost per command")
    args = parser.parse_args()
    env = {
        "FAKE_LEAN_WORKER_PRIVATE_MB": str(args.private_mb),
        "FAKE_LEAN_WORKER_SHARED_MB": str(args.shared_mb),
        "FAKE_LEAN_INIT_DELAY_MS": str(args.init_ms),
        "FAKE_LEAN_CMD_DELAY_MS": str(args.cmd_ms),
        "LEAN_BEAM_HOST_IDLE_S": "60",
    }
    print(
        f"fake Lean: {args.private_mb} MiB private + {args.shared_mb} MiB shared per worker, "
        f"workspace load {args.init_ms} ms, {args.cmd_ms} ms per command; {args.probes} probes "
        f"per agent; {os.cpu_count()} cores"
    )
    print("agents  mode  lean started  peak MiB  end MiB  first ms  late ms  wall s")
    for count in (int(n) for n in args.agents.split(",")):
        for mode in ("off", "auto"):
            row = run(mode, count, args.probes, env)
            print(
                f"{row['agents']:>6}  {row['mode']:<4}  {row['lean_started']:>12}  "
                f"{row['peak_mib']:>8.0f}  {row['end_mib']:>7.0f}  {row['first_ms']:>8.0f}  "
                f"{row['late_ms']:>7.0f}  "
                f"{row['wall_s']:>6.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
