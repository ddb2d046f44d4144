"""Setup benchmark: `lean-beam setup --all --yes` over the seven clients, then `remove --all --yes`.

    .venv-test/bin/python bench/setup.py [--runs N]

Installs this checkout (the test venv's console script) into a temporary root, then times each
command through `<root>/bin/lean-beam` as a real subprocess with a bare client environment and a
fresh temporary HOME per run (so every setup creates seven configs and two skills, and every
remove deletes them). Prints medians and extremes in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.installed import client_env

VENV_BIN = Path(sys.executable).parent


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"failed: {argv}\n{done.stderr}")
    return elapsed * 1000


def summary(name: str, values: list[float]) -> str:
    return (
        f"{name}: median {statistics.median(values):.0f} ms, "
        f"min {min(values):.0f} ms, max {max(values):.0f} ms ({len(values)} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="beam-bench-setup-") as tmp:
        work = Path(tmp)
        root = work / "root"
        home = work / "install-home"
        home.mkdir()
        subprocess.run(
            [
                str(VENV_BIN / "lean-beam"),
                "install",
                "--install-root",
                str(root),
                "--bin-dir",
                str(home / "bin"),
            ],
            env=client_env(home),
            capture_output=True,
            check=True,
        )
        lean_beam = str(root / "bin" / "lean-beam")
        setups, removes = [], []
        for run in range(args.runs):
            user = work / f"home-{run}"
            user.mkdir()
            env = client_env(user)
            setups.append(timed([lean_beam, "setup", "--all", "--yes"], env))
            removes.append(timed([lean_beam, "remove", "--all", "--yes"], env))
        version = [timed([lean_beam, "--help"], client_env(home)) for _ in range(args.runs)]
    print(summary("setup --all --yes (7 clients, 2 skills)", setups))
    print(summary("remove --all --yes", removes))
    print(summary("lean-beam --help (start-up floor)", version))


if __name__ == "__main__":
    main()
