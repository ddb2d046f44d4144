"""Search index benchmark: a generated tree of 5,000 files and 200,000 declarations.

1. First index: every file scanned and stored (an empty cache directory).
2. Queries on the index: name fragments and statement words, the median and 95th percentile.
3. Unchanged re-check of every tree: stat every file, nothing to re-scan.
4. One file touched: the incremental update.
5. Queries through ``SearchService.search`` (what ``lean_search`` runs, minus MCP framing): each
   re-checks the workspace's own files first.

``--layout workspace`` puts every file in the workspace; ``--layout packages`` (a project on a
large dependency) puts 100 in the workspace and the rest in ten ``.lake/packages`` checkouts.

Run: ``.venv-test/bin/python bench/search.py [--layout workspace|packages] [--files N]``.
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

import anyio  # noqa: E402

from beam_runtime.search.index import Index, database_path  # noqa: E402
from beam_runtime.search.service import SearchConfig, SearchService  # noqa: E402
from beam_runtime.search.sources import sources_of  # noqa: E402

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


class _Quiet:
    def progress(self, message: str) -> None:
        pass


async def service_queries(root: Path, cache: Path, count: int) -> list[float]:
    service = SearchService(SearchConfig(cache_dir=str(cache)))
    await service.search(str(root), "warm", None, 20, _Quiet())  # full check once
    times = []
    for query in queries(random.Random(8), count):
        started = time.perf_counter()
        await service.search(str(root), query, None, 20, _Quiet())
        times.append((time.perf_counter() - started) * 1000)
    service.close()
    return sorted(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--decls-per-file", type=int, default=40)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--layout", choices=("workspace", "packages"), default="workspace")
    args = parser.parse_args()
    in_workspace = args.files if args.layout == "workspace" else 100
    work = Path(tempfile.mkdtemp(prefix="beam-search-bench-"))
    try:
        root = work / "proj"
        root.mkdir()
        generate(root, args.files, args.decls_per_file, in_workspace)
        print(f"layout: {args.layout} ({in_workspace} files in the workspace)")
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
        tool = anyio.run(service_queries, root, work / "cache", args.queries)
        print(
            f"service queries: median {statistics.median(tool):.1f} ms, "
            f"p95 {tool[int(len(tool) * 0.95) - 1]:.1f} ms"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
