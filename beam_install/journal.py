"""One transaction over several client files: lock, journal, compare-and-swap replaces,
rollback, recovery.

Holding `<root>/state/setup/lock`, `commit` first writes `state/setup/journal.json` (every file's
old contents and the hashes of old and new), then replaces each file through a temporary file
in its own directory (fsync, mode and owner kept; a symlinked config is written through to its
target). Clients rewrite their own files at any time without our lock, so every replace is a
compare-and-swap against the file the plan was made from (`FileWrite.expect`: device, inode,
size and mtime, taken from the very read): checked just before, then the new file is swapped in
atomically (`renameat2(RENAME_EXCHANGE)` on Linux, `renamex_np(RENAME_SWAP)` on macOS, a plain
rename elsewhere) and the file it displaced is checked again. A file that changed raises
`ConfigChanged` with the displaced file put back and everything done so far rolled back (only
where it still holds what we wrote), so the caller can plan again from the new contents. A
file that did not exist is created only while it still does not (`link`), and one to delete is
moved aside first and checked. A failure rolls back every file already replaced; success
deletes the journal. A journal left behind by a killed process is rolled back by `recover` on
the next setup, remove or doctor: a file is restored only while it still holds exactly what the
dead process wrote (a file it had just swapped out comes back from its temporary name), so
recovery never overwrites an edit made after the interruption (it reports it instead), and the
journal's own stray temporary files go too.

`BEAM_SETUP_FAILPOINT=<step>` kills the process (SIGKILL) at a named step, and `enospc-<n>`
fails the n-th file write with ENOSPC: fault injection for the tests (see `FAILPOINTS`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import signal
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from beam_runtime import safe_read
from beam_runtime.errors import BeamError, denied_path
from beam_runtime.layout import state_dir

FAILPOINT_ENV = "BEAM_SETUP_FAILPOINT"
FAILPOINTS = (
    "locked",
    "journal-temp",
    "journal-written",
    "temp-<n>",
    "replaced-<n>",
    "committing",
)
LOCK_TIMEOUT_S = 30.0
NEW_FILE_MODE = 0o600
JOURNAL_TMP_PREFIX = ".journal."

Identity = tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns


def identity(info: os.stat_result) -> Identity:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def setup_dir(root: Path) -> Path:
    return state_dir(root) / "setup"


def journal_path(root: Path) -> Path:
    return setup_dir(root) / "journal.json"


def failpoint(step: str) -> None:
    if os.environ.get(FAILPOINT_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


def sha(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


class ConfigChanged(Exception):
    """A file changed between the plan and its replace (a client rewrote it): plan again."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path


@dataclass
class Current:
    """A file as read for a plan: its real path, text (None: absent), identity and mode."""

    target: Path
    text: str | None
    identity: Identity | None
    mode: int | None


def read_current(path: Path) -> Current:
    """Read `path` (through a symlink) in a bounded pool thread; the identity is the fstat of
    the very file read. Raises OSError (`RefusedRead` with errno ETIMEDOUT when the file system
    does not answer within `safe_read.TIMEOUT_S`) and UnicodeDecodeError."""
    return safe_read.call_bounded(partial(read_current_now, path), str(path))


def read_current_now(path: Path) -> Current:
    """`read_current` on this thread (for callers already in a bounded thread)."""
    target = Path(os.path.realpath(path))
    try:
        data, info = safe_read.read_regular_stat(str(target), safe_read.CONFIG_CAP)
    except FileNotFoundError:
        return Current(target, None, None, None)
    return Current(target, data.decode("utf-8"), identity(info), stat.S_IMODE(info.st_mode))


@dataclass
class FileWrite:
    """One planned change: `new` None deletes the file, `old` None means it did not exist.

    `expect` is the identity of the file `old` was read from: the replace happens only while the
    file is still that one. `new_dirs` are created for it (removed on rollback); `drop_dirs` are
    removed after the file is deleted, innermost first, while empty (setup created them)."""

    path: Path  # as the client names it; may be a symlink, which stays one
    old: str | None
    new: str | None
    mode: int | None = None  # the existing file's mode, kept
    new_dirs: list[str] = field(default_factory=list)
    expect: Identity | None = None
    target_path: Path | None = None  # the real path the plan read (None: resolve now)
    drop_dirs: list[str] = field(default_factory=list)

    @property
    def target(self) -> Path:
        if self.target_path is None:
            self.target_path = Path(os.path.realpath(self.path))
        return self.target_path


def planned_write(current: Current, path: Path, new: str | None, new_dirs: list[str]) -> FileWrite:
    return FileWrite(
        path, current.text, new, current.mode, new_dirs, current.identity, current.target
    )


@dataclass
class Recovery:
    """What `recover` did with an interrupted transaction's journal."""

    operation: str
    restored: list[str] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "restored": self.restored,
            "conflicts": self.conflicts,
        }

    def to_text(self) -> str:
        lines = [f"recovered an interrupted `lean-beam {self.operation}`:"]
        lines += [f"  restored {path}" for path in self.restored]
        lines += [f"  left alone {c['file']}: {c['reason']}" for c in self.conflicts]
        if not self.restored and not self.conflicts:
            lines.append("  nothing had been written yet")
        return "\n".join(lines)


@contextmanager
def setup_lock(root: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold `state/setup/lock`; a second setup waits (bounded), then fails with lockTimeout."""
    from filelock import FileLock, Timeout

    setup_dir(root).mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(setup_dir(root) / "lock"), timeout=timeout, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise BeamError(
            "lockTimeout",
            f"another lean-beam setup, remove or uninstall has held {setup_dir(root)}/lock "
            f"for over {timeout:g} s",
            "wait for it to finish, then retry (a longer wait: --lock-timeout SECONDS)",
        ) from None
    try:
        yield
    finally:
        lock.release()


def _tmp_name(target: Path) -> Path:
    return target.with_name(f".{target.name}.lean-beam-{os.urandom(4).hex()}.tmp")


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_text(path: Path, text: str, mode: int, index: int | None = None) -> Identity:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        data = text.encode("utf-8")
        if index is not None and os.environ.get(FAILPOINT_ENV) == f"enospc-{index}":
            os.write(fd, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        os.fsync(fd)
        return identity(os.fstat(fd))
    finally:
        os.close(fd)


def _keep_owner(tmp: Path, target: Path) -> None:
    with suppress(FileNotFoundError, PermissionError):
        info = os.stat(target)
        if (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
            os.chown(tmp, info.st_uid, info.st_gid)


@lru_cache(maxsize=1)
def _swapper() -> Callable[[bytes, bytes], int] | None:
    """The libc call that exchanges two paths atomically, or None where there is none."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        at_fdcwd, rename_exchange = -100, 2
        call = libc.renameat2
        return lambda a, b: int(call(at_fdcwd, a, at_fdcwd, b, rename_exchange))
    if sys.platform == "darwin" and hasattr(libc, "renamex_np"):
        rename_swap = 2
        call = libc.renamex_np
        return lambda a, b: int(call(a, b, rename_swap))
    return None


def _exchange(a: Path, b: Path) -> bool:
    """Swap `a` and `b` atomically; False when this system or file system cannot."""
    import ctypes

    swap = _swapper()
    if swap is None:
        return False
    if swap(os.fsencode(a), os.fsencode(b)) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _identity_now(path: Path) -> Identity | None:
    try:
        return identity(os.lstat(path))
    except FileNotFoundError:
        return None


def _check_unchanged(write: FileWrite, target: Path) -> None:
    """Raise ConfigChanged unless `target` is still the file the plan read (or still absent)."""
    now = _identity_now(target)
    if write.old is None:
        if now is not None:
            raise ConfigChanged(write.path)
        return
    if write.expect is not None:
        if now != write.expect:
            raise ConfigChanged(write.path)
        return
    if read_now(target) != write.old:  # no identity was taken: compare the bytes
        raise ConfigChanged(write.path)


def _displaced_is_expected(write: FileWrite, aside: Path) -> bool:
    if write.expect is not None:
        return _identity_now(aside) == write.expect
    return read_now(aside) == write.old


def replace(
    write: FileWrite, text: str | None, mode: int, tmp: Path, index: int | None = None
) -> Identity | None:
    """Make `write.target` hold `text` (None: not exist) through `tmp`, atomically and only
    while it is still the file `write` was planned from; ConfigChanged otherwise. Returns the
    identity of the file written (None after a delete)."""
    target = write.target
    if text is None:
        _delete(write, target, tmp)
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        ours = _write_text(tmp, text, mode, index)
        _keep_owner(tmp, target)
        if index is not None:
            failpoint(f"temp-{index}")
        _check_unchanged(write, target)
        if write.old is None:
            _create(write, tmp, target)
        elif _exchange(tmp, target):
            if not _displaced_is_expected(write, tmp):
                _undo(tmp, target, ours)
                raise ConfigChanged(write.path)
            os.unlink(tmp)
        else:
            os.replace(tmp, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)
    return ours


def _create(write: FileWrite, tmp: Path, target: Path) -> None:
    """`tmp` becomes `target` only while nothing is there (link refuses an existing name)."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise ConfigChanged(write.path) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        os.replace(tmp, target)  # no hard links here: the check just before must do
        return
    os.unlink(tmp)


def _undo(tmp: Path, target: Path, ours: Identity) -> None:
    """After a swap displaced an unexpected file: put it back, unless a client already
    replaced our file (then theirs is newer and stays); our file at `tmp` goes."""
    swapped = _identity_now(target) == ours and _exchange(tmp, target)
    if swapped and _identity_now(tmp) != ours:  # a client wrote in between: keep the newer
        _exchange(tmp, target)
    with suppress(FileNotFoundError):
        os.unlink(tmp)


def _delete(write: FileWrite, target: Path, aside: Path) -> None:
    """Delete `target` only if it is still the planned file: moved aside, checked, unlinked."""
    _check_unchanged(write, target)
    try:
        os.rename(target, aside)
    except FileNotFoundError:
        raise ConfigChanged(write.path) from None
    if not _displaced_is_expected(write, aside):
        with suppress(FileExistsError):  # put it back, unless a newer file is there already
            os.link(aside, target)
        os.unlink(aside)
        raise ConfigChanged(write.path)
    os.unlink(aside)
    if os.path.isdir(target.parent):
        _fsync_dir(target.parent)
    _remove_dirs(write.drop_dirs)


def read_now(target: Path) -> str | None:
    try:
        return safe_read.read_text_bounded(str(target), safe_read.CONFIG_CAP)
    except FileNotFoundError:
        return None


def _record(op: str, writes: list[FileWrite], tmps: list[Path]) -> dict[str, Any]:
    return {
        "schema": 1,
        "operation": op,
        "pid": os.getpid(),
        "started_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "files": [
            {
                "path": str(w.target),
                "old": w.old,
                "old_sha256": sha(w.old),
                "new_sha256": sha(w.new),
                "mode": w.mode if w.mode is not None else NEW_FILE_MODE,
                "tmp": str(tmp),
                "new_dirs": w.new_dirs,
            }
            for w, tmp in zip(writes, tmps, strict=True)
        ],
    }


def _journal_tmp(root: Path) -> Path:
    return setup_dir(root) / f"{JOURNAL_TMP_PREFIX}{os.getpid()}.tmp"


def _write_journal(root: Path, body: dict[str, Any]) -> None:
    path = journal_path(root)
    tmp = _journal_tmp(root)
    with suppress(FileNotFoundError):
        os.unlink(tmp)
    _write_text(tmp, json.dumps(body, indent=1) + "\n", 0o600)
    failpoint("journal-temp")
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _drop_journal(root: Path) -> None:
    os.unlink(journal_path(root))
    _fsync_dir(setup_dir(root))


@dataclass
class _Done:
    write: FileWrite
    ours: Identity | None  # the identity of what we wrote (None: we deleted the file)


def commit(root: Path, op: str, writes: list[FileWrite]) -> None:
    """Apply every write or none (the caller holds `setup_lock`). Raises ConfigChanged when a
    file changed since the plan (everything is back as it was: plan again) and BeamError on
    any other failure."""
    writes = [w for w in writes if w.old != w.new]
    if not writes:
        return
    tmps = [_tmp_name(w.target) for w in writes]
    body = _record(op, writes, tmps)
    try:
        _write_journal(root, body)
    except OSError as exc:
        with suppress(OSError):
            os.unlink(_journal_tmp(root))
        raise _failed(journal_path(root), exc, []) from None
    failpoint("journal-written")
    done: list[_Done] = []
    for index, (write, tmp) in enumerate(zip(writes, tmps, strict=True)):
        try:
            ours = replace(write, write.new, body["files"][index]["mode"], tmp, index)
        except ConfigChanged:
            if write.old is None:
                _remove_dirs(write.new_dirs)
            problems = _roll_back(root, done)
            if problems:
                changed = OSError(errno.EAGAIN, "changed meanwhile")
                raise _failed(write.path, changed, problems) from None
            raise
        except OSError as exc:
            if write.old is None:
                _remove_dirs(write.new_dirs)
            raise _failed(write.path, exc, _roll_back(root, done)) from None
        done.append(_Done(write, ours))
        failpoint(f"replaced-{index}")
    failpoint("committing")
    _drop_journal(root)


def _roll_back(root: Path, done: list[_Done]) -> list[str]:
    """Undo `done` (newest first) where each file still holds what we wrote; the journal goes
    only when nothing failed. A file a client changed after our write is the client's now."""
    problems = []
    for item in reversed(done):
        write = item.write
        back = FileWrite(write.path, write.new, write.old, write.mode, [], item.ours, write.target)
        try:
            replace(back, write.old, write.mode or NEW_FILE_MODE, _tmp_name(write.target))
            if write.old is None:
                _remove_dirs(write.new_dirs)
        except ConfigChanged:
            continue
        except OSError as exc:
            problems.append(f"{write.path}: {exc}")
    if not problems:
        with suppress(OSError):
            _drop_journal(root)
    return problems


def _remove_dirs(dirs: list[str]) -> None:
    """Remove directories setup created, innermost first, while they are empty."""
    for directory in reversed(dirs):
        try:
            os.rmdir(directory)
        except OSError:
            return


def _failed(path: Path, exc: OSError, problems: list[str]) -> BeamError:
    cause = exc.strerror or str(exc)
    if problems:
        return BeamError(
            "setupIncomplete",
            f"could not write {path} ({cause}) and could not undo: {'; '.join(problems)}",
            "free space or fix permissions, then run `lean-beam setup` (it finishes the undo "
            "from its journal)",
            {"file": str(path), "undo_failed": problems},
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        denied = denied_path(str(exc.filename or path))
        return BeamError(
            "setupFailed",
            f"could not write {path}: permission denied on {denied}; every file was left as "
            "it was before",
            f"make {denied} writable for you (chmod u+w {denied}, or fix its owner), then retry",
            {"file": str(path), "errno": exc.errno, "denied": denied},
        )
    return BeamError(
        "setupFailed",
        f"could not write {path} ({cause}); every file was left as it was before",
        "free disk space or fix the permissions of that path, then retry",
        {"file": str(path), "errno": exc.errno},
    )


def recover(root: Path) -> Recovery | None:
    """Roll back a transaction a killed process left (the caller holds `setup_lock`), and
    remove the journal's stray temporary files (a kill while it was being written)."""
    _clear_journal_temporaries(root)
    path = journal_path(root)
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        files = body["files"]
        operation = str(body.get("operation", "setup"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise BeamError(
            "setupJournalInvalid",
            f"the setup journal {path} cannot be read ({exc})",
            f"check the files it lists by hand, then delete {path}",
            {"journal": str(path)},
        ) from None
    recovery = Recovery(operation)
    for item in files:
        _recover_file(item, recovery)
    _drop_journal(root)
    return recovery


def _clear_journal_temporaries(root: Path) -> None:
    try:
        names = os.listdir(setup_dir(root))
    except FileNotFoundError:
        return
    for name in names:
        if name.startswith(JOURNAL_TMP_PREFIX) and name.endswith(".tmp"):
            with suppress(FileNotFoundError):
                os.unlink(setup_dir(root) / name)


def _recover_file(item: dict[str, Any], recovery: Recovery) -> None:
    target, tmp = Path(item["path"]), Path(item["tmp"])
    try:
        current = read_current(target)
        aside = read_now(tmp) if os.path.lexists(tmp) else None
    except (OSError, UnicodeDecodeError) as exc:
        recovery.conflicts.append({"file": str(target), "reason": f"cannot be read: {exc}"})
        return
    now = sha(current.text)
    if os.path.lexists(tmp):
        if now == item["new_sha256"] and sha(aside) != item["new_sha256"]:
            os.replace(tmp, target)  # killed right after a swap: what it displaced comes back
            recovery.restored.append(str(target))
            return
        os.unlink(tmp)
    if now == item["old_sha256"]:
        if item["old"] is None:
            _remove_dirs(list(item.get("new_dirs") or []))
        return
    if now != item["new_sha256"]:
        recovery.conflicts.append(
            {"file": str(target), "reason": "changed after the interruption; kept as it is now"}
        )
        return
    mode = stat.S_IMODE(int(item.get("mode") or NEW_FILE_MODE))
    back = FileWrite(target, current.text, item["old"], mode, [], current.identity, target)
    try:
        replace(back, item["old"], mode, _tmp_name(target))
    except ConfigChanged:
        recovery.conflicts.append(
            {"file": str(target), "reason": "changed during the recovery; kept as it is now"}
        )
        return
    if item["old"] is None:
        _remove_dirs(list(item.get("new_dirs") or []))
    recovery.restored.append(str(target))
