"""Benchmark: `lean-beam runtime list` and a prune dry run with 200 runtimes present.

Usage: .venv-test/bin/python bench/runtime.py [--runtimes 200] [--repeat 9]

Installs lean-beam into a temporary root with the current environment's `lean-beam install`,
derives the other runtimes from it with tests/runtime/trees.py (valid runtimes, hard-linked
files), registers one of them with Codex and one with Claude Code, then times both commands
through `<root>/bin/lean-beam` with an MCP client's environment. Prints the medians; the target
is under 0.5 s each (docs/PERFORMANCE.md).
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.runtime.clienv import client_env, dev_command
from tests.runtime.trees import clone_runtime


def timed(argv: list[str], env: dict[str, str], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"{argv} failed: {done.stderr}")
    return times


def stamp(i: int) -> str:
    return f"2025-01-{1 + i % 28:02d}T00:{i // 60 % 60:02d}:{i % 60:02d}Z"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtimes", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, root = Path(tmp) / "home", Path(tmp) / "beam"
        home.mkdir()
        env = client_env(home)
        done = subprocess.run(
            [
                dev_command("lean-beam"),
                "install",
                "--install-root",
                str(root),
                "--bin-dir",
                str(home / "bin"),
                "--json",
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        base = json.loads(done.stdout)["runtime"]["id"]
        ids = [
            clone_runtime(root, base, variant=str(i), created_at=stamp(i))
            for i in range(args.runtimes - 1)
        ]
        (home / ".codex").mkdir()
        (home / ".codex" / "config.toml").write_text(
            f'[mcp_servers.beam]\ncommand = "{root}/versions/{ids[0]}/bin/lean-beam-mcp"\n'
        )
        (home / ".claude.json").write_text(
            json.dumps(
                {"mcpServers": {"beam": {"command": f"{root}/versions/{ids[1]}/bin/lean-beam-mcp"}}}
            )
        )
        wrapper = str(root / "bin" / "lean-beam")
        results = {
            "version (start-up floor)": timed([wrapper, "version"], env, args.repeat),
            "runtime list --json": timed([wrapper, "runtime", "list", "--json"], env, args.repeat),
            "runtime prune --json (dry run)": timed(
                [wrapper, "runtime", "prune", "--json"], env, args.repeat
            ),
        }
    load = os.getloadavg()[0]
    print(
        f"{args.runtimes} runtimes, {args.repeat} runs each, through <root>/bin/lean-beam "
        f"(load average {load:.2f} on {os.cpu_count()} CPUs)"
    )
    for name, times in results.items():
        print(
            f"  {name}: median {statistics.median(times):.3f} s "
            f"(min {min(times):.3f}, max {max(times):.3f})"
        )


if __name__ == "__main__":
    main()
