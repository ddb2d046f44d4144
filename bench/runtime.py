"""Benchmark: `lean-beam runtime list` and a prune dry run with 200 runtimes present.

Usage: .venv-test/bin/python bench/runtime.py [--runtimes 200] [--repeat 9] [--claude-projects N]

Installs lean-beam into a temporary root with the current environment's `lean-beam install`,
derives the other runtimes from it with tests/runtime/trees.py (valid runtimes, hard-linked
files), registers one of them with Codex and one with Claude Code, then times both commands
through `<root>/bin/lean-beam` with an MCP client's environment. Prints the medians; the target
is under 0.5 s each (docs/PERFORMANCE.md). With `--claude-projects N`, Claude Code's user file
also lists N projects (none of them on disk), each with a server of its own, as a heavy user's
file does; the run then also counts the configs `runtime list` reported unreadable. To compare
two trees, run this file with each tree's `.venv-test/bin/python`: the install comes from the
interpreter's own venv.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.runtime.clienv import client_env, dev_command
from tests.runtime.trees import clone_runtime


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(argv: list[str], env: dict[str, str], repeat: int) -> tuple[list[float], list[float]]:
    """Wall times and CPU times (the command and its reader processes) of `repeat` runs."""
    times, cpu = [], []
    for _ in range(repeat):
        start, used = time.perf_counter(), _children_cpu()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        cpu.append(_children_cpu() - used)
        if done.returncode != 0:
            raise SystemExit(f"{argv} failed: {done.stderr}")
    return times, cpu


def stamp(i: int) -> str:
    return f"2025-01-{1 + i % 28:02d}T00:{i // 60 % 60:02d}:{i % 60:02d}Z"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtimes", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--claude-projects", type=int, default=0)
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
        server = {"command": "/bin/true", "args": ["a" * 50] * 5}
        projects = {
            f"/gone/{i}": {"mcpServers": {"x": server}} for i in range(args.claude_projects)
        }
        (home / ".claude.json").write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "beam": {"command": f"{root}/versions/{ids[1]}/bin/lean-beam-mcp"}
                    },
                    "projects": projects,
                }
            )
        )
        wrapper = str(root / "bin" / "lean-beam")
        listed = subprocess.run(
            [wrapper, "runtime", "list", "--json"], env=env, capture_output=True, text=True
        )
        refs = [r for row in json.loads(listed.stdout)["runtimes"] for r in row["referenced_by"]]
        unreadable = sorted({r["error"] for r in refs if r.get("error")})
        results = {
            "version (start-up floor)": timed([wrapper, "version"], env, args.repeat),
            "runtime list --json": timed([wrapper, "runtime", "list", "--json"], env, args.repeat),
            "runtime prune --json (dry run)": timed(
                [wrapper, "runtime", "prune", "--json"], env, args.repeat
            ),
        }
    load = os.getloadavg()[0]
    print(
        f"{args.runtimes} runtimes, {args.claude_projects} projects listed by Claude Code, "
        f"{args.repeat} runs each, through <root>/bin/lean-beam "
        f"(load average {load:.2f} on {os.cpu_count()} CPUs)"
    )
    print(f"  configs reported unreadable: {unreadable or 'none'}")
    for name, (times, cpu) in results.items():
        print(
            f"  {name}: median {statistics.median(times):.3f} s "
            f"(min {min(times):.3f}, max {max(times):.3f}), "
            f"CPU median {statistics.median(cpu):.3f} s"
        )


if __name__ == "__main__":
    main()
