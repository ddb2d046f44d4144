"""Building a runtime in `state/staging/<random>` and publishing it by rename.

Files are copied with normalized modes (0644, or 0755 for executables), bytecode that matches its
staged source is carried over and the rest compiled, the bytecode record the import gate checks
against is written, the manifest is written last, files lose their write bits, all of it is
flushed to disk, and the finished directory is renamed to `versions/<id>` (same filesystem, so
the runtime appears complete or not at all).
"""

from __future__ import annotations

import compileall
import importlib.util
import os
import shutil
import stat
import sys
from pathlib import Path

from beam_install.manifest_writer import write_manifest
from beam_install.payload import Payload, PayloadFile
from beam_runtime import layout
from beam_runtime.bytecode_gate import RECORD
from beam_runtime.record_check import bytecode_lines, payload_sha256

READ_ONLY_FILE = 0o444
READ_ONLY_EXECUTABLE = 0o555


def _copy(source: str, target: Path) -> None:
    shutil.copyfile(source, target)
    info = os.stat(source)
    # Same mtime as the source, so the bytecode copied next to it stays valid.
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))


class _Tree:
    """Creates parent directories once each."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.made: set[Path] = set()

    def target(self, relpath: str) -> Path:
        path = self.base / relpath
        if path.parent not in self.made:
            path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            self.made.add(path.parent)
        return path


def _write_file(tree: _Tree, item: PayloadFile) -> None:
    target = tree.target(item.relpath)
    if item.content is not None:
        target.write_bytes(item.content)
    else:
        assert item.source is not None
        _copy(item.source, target)
    os.chmod(target, 0o755 if item.executable else 0o644)


def _source_of(stage: Path, relpath: str) -> Path:
    """`a/__pycache__/b.<tag>.pyc` -> `<stage>/a/b.py`."""
    folder, _, name = relpath.rpartition("/__pycache__/")
    return stage / folder / (name.split(".", 1)[0] + ".py")


def _matches_source(pyc: str, source: Path) -> bool:
    """A timestamp pyc whose header names the staged source's mtime and size, as Python checks.

    The import gate runs recorded bytecode without looking at the source again, so bytecode that
    does not match its source is compiled anew instead of copied.
    """
    try:
        info = source.stat()
        with open(pyc, "rb") as handle:
            header = handle.read(16)
    except OSError:
        return False
    expected = (
        importlib.util.MAGIC_NUMBER
        + b"\0\0\0\0"
        + (int(info.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
        + (info.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    )
    return header == expected


def new_stage(root: Path, runtime_id: str) -> Path:
    stage = layout.staging_dir(root) / f"{runtime_id}.{os.urandom(4).hex()}"
    stage.mkdir(mode=0o755)
    return stage


def fill_stage(stage: Path, payload: Payload) -> None:
    """Copy the payload and its bytecode, and compile the bytecode that is missing."""
    tree = _Tree(stage)
    for item in payload.files:
        _write_file(tree, item)
    for relpath, source in payload.bytecode:
        if not _matches_source(source, _source_of(stage, relpath)):
            continue  # stale or not timestamp-based: compiled afresh below
        target = tree.target(relpath)
        _copy(source, target)
        os.chmod(target, 0o644)
    compileall.compile_dir(str(stage / "site"), quiet=2, workers=1)
    payload.bytecode_sha256 = write_bytecode_record(stage)


def write_bytecode_record(stage: Path) -> str:
    """Write `__pycache__/bytecode.sha256`, the lines the import gate checks every module's
    bytecode against, and return their sha256 (the manifest's `bytecode_sha256`)."""
    lines, problem = bytecode_lines(stage)
    if problem is not None:
        raise OSError(problem)
    record = stage / RECORD
    record.parent.mkdir(mode=0o755, exist_ok=True)
    record.write_bytes(b"".join(lines))
    os.chmod(record, 0o644)
    return payload_sha256(lines) if lines else ""


def _flush_filesystem(path: Path) -> None:
    """Flush the filesystem holding `path` (Linux `syncfs`), else every filesystem (`sync`).

    One call instead of an fsync per file: a runtime has hundreds of files.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if libc.syncfs(fd) == 0:
                return
        finally:
            os.close(fd)
    os.sync()


def seal_stage(stage: Path, payload: Payload) -> None:
    """Write the manifest last, drop write bits, and flush everything to disk."""
    write_manifest(stage, payload)
    make_read_only(stage)
    _flush_filesystem(stage)


def make_read_only(tree: Path) -> None:
    """Remove the write bits of every file below `tree` (directories stay writable)."""
    for current, _dirs, files in os.walk(tree):
        for name in files:
            path = os.path.join(current, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode):
                os.chmod(path, READ_ONLY_EXECUTABLE if mode & 0o111 else READ_ONLY_FILE)


def create_lease(root: Path, runtime_id: str) -> None:
    """Create `state/leases/<id>.lease`, which live processes of the runtime lock shared."""
    path = layout.lease_path(root, runtime_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    os.close(fd)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(stage: Path, root: Path, runtime_id: str) -> Path:
    """Rename the sealed stage to `versions/<id>` and make the rename durable."""
    target = layout.runtime_dir(root, runtime_id)
    os.rename(stage, target)
    fsync_dir(layout.versions_dir(root))
    fsync_dir(layout.staging_dir(root))
    return target
