"""Instructions the first search index of a generated workspace costs, in-process, per tree.

One workspace is generated (``bench/search.py``'s generator: ``--files`` files of 40
declarations each), left alone for 2.5 s (past the racy window of its timestamps), then for
each ``--tree`` (a checkout, e.g. ``git archive main | tar -x -C /tmp/beam-main``; put first on
``PYTHONPATH``) a fresh process under ``valgrind --tool=callgrind`` imports that tree's
``SearchService`` and, on a signal, runs one ``search`` with an empty cache (the first index).
The counters are dumped just before and just after that call: the figure is the instructions
of the first index alone (every thread of the process: the scan, the prefetching reader,
SQLite), not of the interpreter's start. Instruction counts hardly move with the load of the
machine, unlike CPU time. The database's size is printed, and each tree's index is digested
(every ``files`` path, ``decls`` row and ``fts`` row): equal digests mean the trees stored the
same contents.

``--profile N`` also runs each tree once without valgrind under cProfile (the refresh thread)
and prints its N most expensive functions by own time.

Run: ``.venv-test/bin/python bench/index_cost.py --tree /tmp/beam-main --tree . [--files 1000]``.
Figures go to docs/PERFORMANCE.md ("Search").
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def inner(root: str, cache: str, profile: int) -> int:
    """In the measured process: wait for ``go`` on stdin, build, print ``done``."""
    import anyio

    from beam_runtime.search.service import SearchConfig, SearchService

    class Quiet:
        def progress(self, message: str) -> None:
            pass

    service = SearchService(SearchConfig(cache_dir=cache))
    profiler = _profile_refresh_thread() if profile else None
    print("ready", flush=True)
    sys.stdin.readline()
    result = anyio.run(service.search, root, "warm", None, 5, 3_600_000, Quiet())
    print("done", flush=True)
    sys.stdin.readline()
    service.close()
    assert result["complete"], result
    if profiler is not None:
        import pstats

        pstats.Stats(profiler).sort_stats("tottime").print_stats(profile)
    return 0


def _profile_refresh_thread() -> object:
    """A cProfile of the thread that runs the refresh (cProfile sees one thread only)."""
    import cProfile
    import threading

    profiler = cProfile.Profile()
    run = threading.Thread.run

    def profiled(self: threading.Thread) -> None:
        if self.name != "search-refresh":
            return run(self)
        profiler.enable()
        try:
            return run(self)
        finally:
            profiler.disable()

    threading.Thread.run = profiled  # type: ignore[method-assign]
    return profiler


def measure(tree: Path, root: Path, work: Path, valgrind: bool, profile: int) -> dict[str, str]:
    cache = work / f"cache-{len(list(work.iterdir()))}"
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    env["ELAN_HOME"] = str(work / "no-elan")
    out = work / f"{cache.name}.callgrind"
    prefix = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] if valgrind else []
    args = [sys.executable, str(HERE), "--inner", str(root), str(cache), str(profile)]
    proc = subprocess.Popen(
        [*prefix, *args],
        cwd=tree,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL if valgrind else None,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready"
        if valgrind:
            _dump(proc.pid, out, "start")  # the interpreter's start and imports: left out
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "done"
        built = _dump(proc.pid, out, "built") if valgrind else 0
        proc.stdin.write("exit\n")
        proc.stdin.flush()
        report = proc.stdout.read()
        assert proc.wait(timeout=600) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return {
        "instructions": f"{built / 1e6:,.0f} M" if valgrind else "-",
        "digest": _digest(cache),
        "database": f"{_size(cache) / 1e6:.1f} MB",
        "profile": report,
    }


def _dump(pid: int, out: Path, name: str) -> int:
    """Instructions since the last dump (callgrind writes ``<out>.<n>`` per dump)."""
    existing = set(out.parent.glob(out.name + ".*"))
    subprocess.run(
        ["callgrind_control", f"--dump={name}", str(pid)],
        capture_output=True,
        check=True,
        timeout=600,
    )
    (dump,) = set(out.parent.glob(out.name + ".*")) - existing
    found = re.search(r"^(?:summary|totals): (\d+)", dump.read_text(), re.MULTILINE)
    assert found is not None, dump
    keep = os.environ.get("BENCH_KEEP_CALLGRIND")
    if keep:
        shutil.copy(dump, Path(keep) / f"{name}.{pid}")
    return int(found.group(1))


def _size(cache: Path) -> int:
    """The database's files after the process closed it (its WAL is folded in then)."""
    return sum(path.stat().st_size for path in cache.glob("search/*.sqlite3*") if path.is_file())


def _digest(cache: Path) -> str:
    """A digest of what the index stores: files' paths, declarations, full-text rows."""
    (path,) = cache.glob("search/*.sqlite3")
    db = sqlite3.connect(path)
    digest = hashlib.sha256()
    queries = (
        "SELECT path FROM files ORDER BY id",
        "SELECT d.id, f.path, d.name, d.kind, d.signature, d.line FROM decls d "
        "JOIN files f ON f.id = d.file ORDER BY d.id",
        "SELECT rowid, name, words FROM fts ORDER BY rowid",
    )
    count = 0
    for sql in queries:
        for row in db.execute(sql):
            digest.update(repr(row).encode())
            count += 1
    db.close()
    return f"{digest.hexdigest()[:16]} ({count} rows)"


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--inner":
        return inner(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path, action="append", help="a checkout (repeatable)")
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--profile", type=int, default=0, help="top N functions by own time")
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("needs valgrind (callgrind and callgrind_control)")
    sys.path.insert(0, str(HERE.parent))
    from search import generate

    trees = [tree.resolve() for tree in args.tree or [HERE.parents[1]]]
    work = Path(tempfile.mkdtemp(prefix="beam-index-cost-"))
    try:
        root = work / "proj"
        root.mkdir()
        generate(root, args.files, 40, args.files)
        time.sleep(2.5)  # past the racy window of the generated files' times
        rows = []
        for tree in trees:
            measured = measure(tree, root, work, True, 0)
            rows.append((tree, measured))
            print(f"{tree}: {measured['instructions']}, {measured['digest']}", flush=True)
            if args.profile:
                print(measure(tree, root, work, False, args.profile)["profile"], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nfirst index of {args.files} files, instructions (callgrind, whole process):")
    print("| tree | instructions | database | index digest |")
    print("| --- | --- | --- | --- |")
    for tree, measured in rows:
        cells = " | ".join(measured[key] for key in ("instructions", "database", "digest"))
        print(f"| {tree} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
