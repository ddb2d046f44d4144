"""Search index benchmark (issue 15): a generated tree of 5,000 files and 200,000 declarations.

1. First index: every file scanned and stored (an empty cache directory).
2. Queries: name fragments and statement words, the median and 95th percentile.
3. Unchanged re-check: stat every file, nothing to re-scan.
4. One file touched: the incremental update.

Run: ``.venv-test/bin/python bench/search.py [--files N] [--decls-per-file M]``.
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from beam_runtime.search.index import Index, database_path  # noqa: E402
from beam_runtime.search.sources import sources_of  # noqa: E402

WORDS = tuple(
    "add mul sub div mod pow succ pred zero one two comm assoc left right cancel le lt ge gt "
    "eq ne min max abs neg inv map filter fold append length reverse take drop head tail cons "
    "nil mem subset union inter compl image preimage card sum prod range list finset set nat "
    "int rat real pos nonneg even odd prime gcd lcm dvd injective surjective bijective mono"
).split()
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


def generate(root: Path, files: int, per_file: int) -> None:
    rng = random.Random(15)
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "lakefile.toml").write_text('name = "bench"\n')
    counter = 0
    for number in range(files):
        folder = root / "Bench" / f"Part{number % 50}"
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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--decls-per-file", type=int, default=40)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="beam-search-bench-"))
    try:
        root = work / "proj"
        root.mkdir()
        generate(root, args.files, args.decls_per_file)
        sources = sources_of(str(root), {"HOME": str(work)})
        index = Index(database_path(str(work / "cache"), sources))
        started = time.perf_counter()
        files = index.refresh(sources, lambda done, total: None)
        first = time.perf_counter() - started
        with index._lock:
            decls = index._db.execute("SELECT count(*) FROM decls").fetchone()[0]
        print(f"first index: {files} files, {decls} declarations in {first:.1f} s")
        times, empty = [], 0
        for query in queries(random.Random(7), args.queries):
            started = time.perf_counter()
            hits = index.query(query, (), 20)
            times.append((time.perf_counter() - started) * 1000)
            empty += not hits
        times.sort()
        p95 = times[int(len(times) * 0.95) - 1]
        print(
            f"queries: {len(times)}, median {statistics.median(times):.1f} ms, p95 {p95:.1f} ms, "
            f"max {times[-1]:.1f} ms, {empty} without hits"
        )
        started = time.perf_counter()
        index.refresh(sources, lambda done, total: None)
        print(f"unchanged re-check: {time.perf_counter() - started:.2f} s")
        touched = root / "Bench" / "Part0" / "M0.lean"
        touched.write_text(touched.read_text() + "theorem bench_touched : True := trivial\n")
        started = time.perf_counter()
        index.refresh(sources, lambda done, total: None)
        print(f"one file changed: {time.perf_counter() - started:.2f} s")
        size = sum(p.stat().st_size for p in (work / "cache").rglob("*") if p.is_file())
        print(f"database: {size / 1e6:.0f} MB")
        index.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
