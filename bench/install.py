"""Install benchmarks: fresh install, identical reinstall, delegation overhead (medians).

    .venv-test/bin/python bench/install.py [--venv PATH] [--runs N]

Builds the wheel of this checkout into a temporary venv (as the tests do) unless `--venv` names
one that already has lean-beam installed. Every command runs as a real subprocess with a bare
client environment and a temporary HOME.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.installed import client_env
from tests.support.venv import wheel_venv


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"failed: {argv}\n{done.stderr}")
    return elapsed, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--venv", type=Path, default=None)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="beam-bench-") as tmp:
        work = Path(tmp)
        venv = args.venv or wheel_venv(work / "build")
        home = work / "home"
        home.mkdir()
        env = client_env(home)
        lean_beam = str(venv / "bin" / "lean-beam")
        fresh = []
        for run in range(args.runs):
            root = work / f"root-{run}"
            flags = ["--install-root", str(root), "--bin-dir", str(work / f"bin-{run}")]
            elapsed, out = timed([lean_beam, "install", "--json", *flags], env)
            fresh.append(elapsed)
        runtime_id = json.loads(out)["runtime"]["id"]
        again = [timed([lean_beam, "install", *flags], env)[0] for _ in range(args.runs)]
        delegated_env = client_env(home, BEAM_INSTALL_ROOT=str(root))
        launcher = str(root / "versions" / runtime_id / "bin" / "lean-beam")
        runs = max(args.runs * 4, 20)
        console = [timed([lean_beam, "--version"], delegated_env)[0] for _ in range(runs)]
        direct = [timed([launcher, "--version"], delegated_env)[0] for _ in range(runs)]
    ms = 1000
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    for label, times, unit in (
        ("fresh install", fresh, "s"),
        ("identical reinstall", again, "s"),
        ("launcher --version", direct, "ms"),
        ("console --version", console, "ms"),
    ):
        scale = ms if unit == "ms" else 1
        print(
            f"{label:<20} median {statistics.median(times) * scale:.3f} {unit}  "
            f"min {min(times) * scale:.3f} {unit}  ({len(times)} runs)"
        )
    overhead = (statistics.median(console) - statistics.median(direct)) * ms
    floor = (min(console) - min(direct)) * ms
    print(f"delegation overhead  {overhead:.1f} ms (medians), {floor:.1f} ms (minima)")


if __name__ == "__main__":
    main()
