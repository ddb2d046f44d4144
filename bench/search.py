"""``lean_search`` through a real server: the first index, and what an unchanged search costs.

For each size (``--sizes``, files of 40 declarations each) one generated workspace is searched by
a fresh ``lean-beam-mcp`` of each tree (``--before PATH``: a checkout of another revision, e.g.
``git archive main | tar -x -C /tmp/beam-main``; then this checkout), each with an empty cache:

- first index: the first ``lean_search`` (wall time, and the server process's CPU);
- unchanged: ``--queries`` searches with nothing changed, server CPU per call (user + system of
  the server process from ``psutil``) and the median wall time;
- one edit: one file rewritten in place before each of 20 searches, server CPU per call;
- the size of the database files.

Servers run with ``LEAN_BEAM_HOST=off``: the index is built and queried in the server's own
process, so its CPU figures hold that work (with a shared host they would be the host's).

The files are generated, then left alone for 2.5 s, past the racy window of their timestamps
(a file changed within 2 s of being read is read again once). ``--layout packages`` puts 100
files in the workspace and the rest in ten ``.lake/packages`` checkouts.

Run: ``.venv-test/bin/python bench/search.py --before /tmp/beam-main [--sizes 1000,5000]``.
Figures go to docs/PERFORMANCE.md ("Search").
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from driver import REPO, Server

VOCABULARY = (
    "add mul sub div mod pow succ pred zero one two comm assoc left right cancel le lt ge gt "
    "eq ne min max abs neg inv map filter fold append length reverse take drop head tail cons "
    "nil mem subset union inter compl image preimage card sum prod range list finset set nat "
    "int rat real pos nonneg even odd prime gcd lcm dvd injective surjective bijective mono"
)
WORDS = tuple(VOCABULARY.split())
TYPES = ("Nat", "Int", "List α", "Finset α", "Set α", "ℕ", "ℤ")
KINDS = ("theorem", "lemma", "def", "abbrev", "instance")


def declaration(rng: random.Random, index: int) -> str:
    name = "_".join(rng.sample(WORDS, 3)) + f"_{index}"
    left, right = rng.sample(WORDS, 2)
    type_ = rng.choice(TYPES)
    kind = rng.choice(KINDS)
    if kind in ("theorem", "lemma"):
        return (
            f"/-- The {left} of {right}. -/\n@[simp]\n{kind} {name} (a b : {type_}) :\n"
            f"    {left} a (b + 0) = {right} b a := by\n  simp [{left}, {right}]\n"
        )
    if kind == "instance":
        return f"instance inst_{name} : Inhabited ({type_}) := ⟨default⟩\n"
    return f"{kind} {name} (x : {type_}) : {type_} :=\n  {left} x x\n"


def generate(root: Path, files: int, per_file: int, in_workspace: int) -> None:
    rng = random.Random(15)
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "lakefile.toml").write_text('name = "bench"\n')
    counter = 0
    for number in range(files):
        base = root if number < in_workspace else root / ".lake" / "packages" / f"dep{number % 10}"
        folder = base / "Bench" / f"Part{number % 50}"
        folder.mkdir(parents=True, exist_ok=True)
        parts = [f"namespace Bench.M{number}\n\n"]
        for _ in range(per_file):
            parts.append(declaration(rng, counter) + "\n")
            counter += 1
        parts.append(f"end Bench.M{number}\n")
        (folder / f"M{number}.lean").write_text("".join(parts))


def queries(rng: random.Random, count: int) -> list[str]:
    found = []
    for _ in range(count):
        if rng.random() < 0.5:
            found.append("_".join(rng.sample(WORDS, 2)))  # a name fragment
        else:
            found.append(" ".join(rng.sample(WORDS, 3)))  # words of a statement
    return found


def measure(tree: Path, root: Path, cache: Path, count: int) -> dict[str, float]:
    # In-process (no shared host): the server's own CPU then holds the index's work.
    server = Server(
        tree, XDG_CACHE_HOME=str(cache), ELAN_HOME=str(cache / "no-elan"), LEAN_BEAM_HOST="off"
    )
    ws: dict[str, Any] = {"workspace": {"root": str(root)}}
    try:
        cpu, started = server.cpu_ms(), time.perf_counter()
        server.ask("lean_search", {**ws, "query": "warm"})
        first_s, first_cpu = time.perf_counter() - started, server.cpu_ms() - cpu
        for query in queries(random.Random(3), 10):  # settle: first queries, page cache
            server.ask("lean_search", {**ws, "query": query})
        walls = []
        cpu = server.cpu_ms()
        for query in queries(random.Random(8), count):
            started = time.perf_counter()
            server.ask("lean_search", {**ws, "query": query})
            walls.append((time.perf_counter() - started) * 1000)
        unchanged = (server.cpu_ms() - cpu) / count
        touched = root / "Bench" / "Part0" / "M0.lean"
        text = touched.read_text()
        cpu = server.cpu_ms()
        for serial in range(20):
            touched.write_text(text + f"theorem bench_touched_{serial} : True := trivial\n")
            hits = server.ask("lean_search", {**ws, "query": f"bench_touched_{serial}"})["hits"]
            assert hits and hits[0]["name"].endswith(f"bench_touched_{serial}"), hits
        edited = (server.cpu_ms() - cpu) / 20
        touched.write_text(text)
    finally:
        server.close()
    size = sum(path.stat().st_size for path in cache.rglob("*.sqlite3*") if path.is_file())
    return {
        "database_mb": size / 1e6,
        "first_s": first_s,
        "first_cpu_s": first_cpu / 1000,
        "unchanged_cpu_ms": unchanged,
        "unchanged_wall_ms": statistics.median(walls),
        "edit_cpu_ms": edited,
    }


ROWS = (
    ("first index, wall", "first_s", "{:.1f} s"),
    ("first index, server CPU", "first_cpu_s", "{:.1f} s"),
    ("unchanged search, server CPU per call", "unchanged_cpu_ms", "{:.2f} ms"),
    ("unchanged search, median wall", "unchanged_wall_ms", "{:.2f} ms"),
    ("one file edited, server CPU per call", "edit_cpu_ms", "{:.2f} ms"),
    ("database size", "database_mb", "{:.0f} MB"),
)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,5000")
    parser.add_argument("--before", type=Path, help="a checkout to compare with (runs first)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--layout", choices=("workspace", "packages"), default="workspace")
    args = parser.parse_args()
    trees = ([("before", args.before.resolve())] if args.before else []) + [("after", REPO)]
    for size in (int(s) for s in args.sizes.split(",")):
        work = Path(tempfile.mkdtemp(prefix="beam-search-bench-"))
        try:
            root = work / "proj"
            root.mkdir()
            in_workspace = size if args.layout == "workspace" else 100
            generate(root, size, 40, in_workspace)
            time.sleep(2.5)  # past the racy window of the generated files' times
            results = {
                name: measure(tree, root, work / f"cache-{name}", args.queries)
                for name, tree in trees
            }
        finally:
            shutil.rmtree(work, ignore_errors=True)
        with open("/proc/loadavg") as handle:
            load = handle.read().split()[0]
        print(f"\n{size} files ({args.layout} layout), load {load}")
        print("| measure | " + " | ".join(name for name, _ in trees) + " |")
        print("| --- |" + " --- |" * len(trees))
        for label, key, form in ROWS:
            cells = " | ".join(form.format(results[name][key]) for name, _ in trees)
            print(f"| {label} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
