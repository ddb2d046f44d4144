"""A stand-in for one Lean file worker process (started with ``setsid`` by the fake watchdog).

It does no elaboration (the watchdog process does that); it exists so that process management
and memory accounting can be tested: normally it exits when its stdin closes, with
FAKE_LEAN_STUBBORN_WORKERS=1 it ignores SIGTERM, SIGHUP and end of input and lives until killed
(or a safety deadline).

Memory ballast, as a real worker holds its imports: ``FAKE_LEAN_WORKER_PRIVATE_MB`` of private
anonymous memory (each page written), and ``FAKE_LEAN_WORKER_SHARED_MB`` of one file that every
worker of the project maps shared and reads (``.lake/fake-oleans.bin`` under the working
directory, made once), standing in for the ``.olean`` files all workers map: its pages count
once in the workers' summed PSS.
"""

import contextlib
import fcntl
import mmap
import os
import signal
import sys
import time

PAGE = mmap.PAGESIZE
MIB = 1 << 20


def _megabytes(name: str) -> int:
    try:
        return max(0, int(os.environ.get(name, "0") or "0"))
    except ValueError:
        return 0


def _private(size_mb: int) -> bytearray:
    block = bytearray(size_mb * MIB)
    for offset in range(0, len(block), PAGE):
        block[offset] = 1  # touch every page: it is resident and this process's alone
    return block


def _shared(size_mb: int) -> mmap.mmap | None:
    if not size_mb:
        return None
    path = os.path.join(os.getcwd(), ".lake", "fake-oleans.bin")
    size = size_mb * MIB
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".lock", "wb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one file for every worker, made once
        if not os.path.exists(path) or os.path.getsize(path) != size:
            partial = f"{path}.{os.getpid()}"
            with open(partial, "wb") as handle:
                handle.write(b"\1" * size)  # real pages, not a hole
            os.replace(partial, path)
    with open(path, "rb") as handle:
        mapped = mmap.mmap(handle.fileno(), size, mmap.MAP_SHARED, mmap.PROT_READ)
    total = 0
    for offset in range(0, size, PAGE):
        total += mapped[offset]  # fault every page in: shared with the other workers
    return mapped


def main() -> int:
    uri = sys.argv[-1] if len(sys.argv) > 1 else "?"  # ``--worker URI``, as Lean's workers
    try:
        return _work(uri)
    except MemoryError:  # over an address-space limit: what Lean's runtime prints, then exit
        os.write(2, b"INTERNAL PANIC: out of memory\n")
        return 1


def _work(uri: str) -> int:
    ballast = (
        _private(_megabytes("FAKE_LEAN_WORKER_PRIVATE_MB")),
        _shared(_megabytes("FAKE_LEAN_WORKER_SHARED_MB")),
    )
    sys.stderr.write(f"[{uri}] fake file worker {os.getpid()} started\n")
    sys.stderr.flush()
    with contextlib.suppress(OSError):
        os.write(1, b"ready\n")  # the watchdog waits for this when there is a ballast
    if os.environ.get("FAKE_LEAN_STUBBORN_WORKERS", "") in ("1", "true", "yes"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        deadline = time.monotonic() + float(os.environ.get("FAKE_LEAN_WORKER_MAX_LIFE_S", "300"))
        while time.monotonic() < deadline:
            time.sleep(0.2)
        return 0
    while sys.stdin.buffer.read(4096):
        pass
    del ballast
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
