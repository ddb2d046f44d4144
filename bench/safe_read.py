"""Cost of reading a source through `beam_runtime.safe_read`: a plain read on the
event loop against `read_async` (worker thread, time bound), median of N reads of one file.

Run: `.venv-test/bin/python bench/safe_read.py [--runs N] [--kib K]`. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

import anyio

from beam_runtime import safe_read


def _plain(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


async def _measure(path: str, runs: int) -> dict[str, float]:
    plain, bounded = [], []
    for _ in range(runs):
        started = time.perf_counter()
        _plain(path)
        plain.append(time.perf_counter() - started)
        started = time.perf_counter()
        await safe_read.read_async(path, safe_read.SOURCE_CAP)
        bounded.append(time.perf_counter() - started)
    return {
        "plain_read_us": round(statistics.median(plain) * 1e6, 1),
        "read_async_us": round(statistics.median(bounded) * 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--kib", type=int, default=8)
    opts = parser.parse_args()
    fd, path = tempfile.mkstemp(suffix=".lean")
    os.write(fd, b"-- x\n" * (opts.kib * 1024 // 5))
    os.close(fd)
    result = anyio.run(_measure, path, opts.runs)
    os.unlink(path)
    print(json.dumps({"file_kib": opts.kib, "runs": opts.runs, **result}))


if __name__ == "__main__":
    main()
