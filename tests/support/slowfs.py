"""A FUSE file system whose chosen files hang, for tests of reads that never finish (NFS, FUSE).

`python -m tests.support.slowfs MOUNT SOURCE [--hang-read NAME]... [--hang-stat NAME]...` serves
a read-only copy of the directory SOURCE (taken at start) at MOUNT. Reading a file named by
``--hang-read`` blocks until the file system is unmounted; so does every ``stat`` of a name given
by ``--hang-stat`` (the kernel asks the daemon, because attributes are never cached here). Other
files answer at once, from several threads, so a hung request does not hold the others up.

`slow_mount` is the pytest fixture side: it starts the daemon, waits for the mount and unmounts
(lazily, then kills the daemon) at the end, which also releases every request still hanging.
Where FUSE cannot be used (no ``/dev/fuse``, no libfuse, no permission to mount) it skips, except
under CI (``CI`` set), where a missing FUSE is a failure.
"""

from __future__ import annotations

import argparse
import errno
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def _load(source: Path) -> tuple[dict[str, bytes], set[str]]:
    files: dict[str, bytes] = {}
    dirs = {"/"}
    for path in sorted(source.rglob("*")):
        name = "/" + path.relative_to(source).as_posix()
        if path.is_dir():
            dirs.add(name)
        elif path.is_file():
            files[name] = path.read_bytes()
    return files, dirs


def serve(mount: str, source: Path, hang_read: set[str], hang_stat: set[str]) -> None:
    from fuse import FUSE, FuseOSError, Operations  # type: ignore[import-untyped]

    files, dirs = _load(source)
    forever = threading.Event()

    class SlowFS(Operations):  # type: ignore[misc]
        def getattr(self, path: str, fh: Any = None) -> dict[str, Any]:
            if path.lstrip("/") in hang_stat:
                forever.wait()
            now = time.time()
            base = {"st_uid": os.getuid(), "st_gid": os.getgid(), "st_nlink": 1}
            base.update(st_atime=now, st_mtime=now - 60, st_ctime=now - 60)
            if path in dirs:
                return {**base, "st_mode": stat.S_IFDIR | 0o755, "st_nlink": 2}
            if path in files:
                return {**base, "st_mode": stat.S_IFREG | 0o644, "st_size": len(files[path])}
            raise FuseOSError(errno.ENOENT)

        def readdir(self, path: str, fh: Any) -> list[str]:
            prefix = path.rstrip("/") + "/"
            names = {
                p[len(prefix) :].split("/")[0] for p in [*files, *dirs] if p.startswith(prefix)
            }
            return [".", "..", *sorted(n for n in names if n)]

        def open(self, path: str, flags: int) -> int:
            if path not in files:
                raise FuseOSError(errno.ENOENT)
            return 0

        def read(self, path: str, size: int, offset: int, fh: Any) -> bytes:
            if path.lstrip("/") in hang_read:
                forever.wait()
            return files[path][offset : offset + size]

    FUSE(
        SlowFS(),
        mount,
        foreground=True,
        nothreads=False,
        ro=True,
        attr_timeout=0.0,
        entry_timeout=0.0,
        negative_timeout=0.0,
        direct_io=True,
    )


def _unavailable(reason: str) -> None:
    import pytest

    if os.environ.get("CI"):
        pytest.fail(f"FUSE is needed in CI (.ci/run installs fuse3 and libfuse2): {reason}")
    pytest.skip(f"no FUSE here: {reason}")


def _mounted(mount: Path) -> bool:
    with open("/proc/self/mounts", encoding="utf-8") as mounts:
        return any(line.split()[1] == str(mount) for line in mounts if len(line.split()) > 1)


@contextmanager
def slow_mount(
    source: Path, mount: Path, *, hang_read: tuple[str, ...] = (), hang_stat: tuple[str, ...] = ()
) -> Iterator[Path]:
    """SOURCE served at MOUNT with the named files hanging; unmounted afterwards."""
    if not os.path.exists("/dev/fuse"):
        _unavailable("/dev/fuse is missing")
    try:
        import fuse  # type: ignore[import-untyped]  # noqa: F401
    except (ImportError, OSError) as exc:
        _unavailable(f"fusepy or libfuse2 cannot be loaded ({exc})")
    mount.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "tests.support.slowfs", str(mount), str(source)]
    argv += [arg for name in hang_read for arg in ("--hang-read", name)]
    argv += [arg for name in hang_stat for arg in ("--hang-stat", name)]
    repo = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": repo}
    daemon = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
    try:
        _wait(lambda: _mounted(mount) or daemon.poll() is not None)
        if not _mounted(mount):
            _unavailable(f"the FUSE daemon did not mount: {daemon.communicate()[1][-500:]}")
        yield mount
    finally:
        fusermount = shutil.which("fusermount") or shutil.which("fusermount3") or "fusermount"
        subprocess.run([fusermount, "-u", "-z", str(mount)], capture_output=True, check=False)
        daemon.kill()
        daemon.wait(timeout=30)


def _wait(done: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mount")
    parser.add_argument("source", type=Path)
    parser.add_argument("--hang-read", action="append", default=[])
    parser.add_argument("--hang-stat", action="append", default=[])
    args = parser.parse_args()
    serve(args.mount, args.source, set(args.hang_read), set(args.hang_stat))


if __name__ == "__main__":
    main()
