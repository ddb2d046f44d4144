"""One transaction over several client files: lock, journal, atomic replaces, rollback, recovery.

Holding `<root>/state/setup/lock`, `commit` first writes `state/setup/journal.json` (every file's
old contents and the hashes of old and new), then replaces each file through a temporary file
in its own directory (fsync, mode and owner kept, rename; a symlinked config is written through
to its target). A failure rolls back every file already replaced; success deletes the journal.
A journal left behind by a killed process is rolled back by `recover` on the next setup, remove
or doctor: a file is restored only while it still holds exactly what the dead process wrote, so
recovery never overwrites an edit made after the interruption (it reports it instead).

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
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from beam_runtime import safe_read
from beam_runtime.errors import BeamError
from beam_runtime.layout import state_dir

FAILPOINT_ENV = "BEAM_SETUP_FAILPOINT"
FAILPOINTS = ("locked", "journal-written", "temp-<n>", "replaced-<n>", "committing")
LOCK_TIMEOUT_S = 30.0
NEW_FILE_MODE = 0o600


def setup_dir(root: Path) -> Path:
    return state_dir(root) / "setup"


def journal_path(root: Path) -> Path:
    return setup_dir(root) / "journal.json"


def failpoint(step: str) -> None:
    if os.environ.get(FAILPOINT_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


def sha(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class FileWrite:
    """One planned change: `new` None deletes the file, `old` None means it did not exist."""

    path: Path  # as the client names it; may be a symlink, which stays one
    old: str | None
    new: str | None
    mode: int | None = None  # the existing file's mode, kept
    new_dirs: list[str] = field(default_factory=list)  # created for it; removed on rollback

    @property
    def target(self) -> Path:
        return Path(os.path.realpath(self.path))


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


def _write_text(path: Path, text: str, mode: int, index: int | None = None) -> None:
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
    finally:
        os.close(fd)


def _keep_owner(tmp: Path, target: Path) -> None:
    with suppress(FileNotFoundError, PermissionError):
        info = os.stat(target)
        if (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
            os.chown(tmp, info.st_uid, info.st_gid)


def replace(target: Path, text: str | None, mode: int, tmp: Path, index: int | None = None) -> None:
    """Make `target` hold `text` (None: not exist), atomically, through `tmp`."""
    if text is None:
        with suppress(FileNotFoundError):
            os.unlink(target)
        if os.path.isdir(target.parent):
            _fsync_dir(target.parent)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        _write_text(tmp, text, mode, index)
        _keep_owner(tmp, target)
        if index is not None:
            failpoint(f"temp-{index}")
        os.replace(tmp, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


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


def _write_journal(root: Path, body: dict[str, Any]) -> None:
    path = journal_path(root)
    tmp = path.with_name(f".journal.{os.getpid()}.tmp")
    with suppress(FileNotFoundError):
        os.unlink(tmp)
    _write_text(tmp, json.dumps(body, indent=1) + "\n", 0o600)
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _drop_journal(root: Path) -> None:
    os.unlink(journal_path(root))
    _fsync_dir(setup_dir(root))


def commit(root: Path, op: str, writes: list[FileWrite]) -> None:
    """Apply every write or none (the caller holds `setup_lock`); raises BeamError on failure."""
    writes = [w for w in writes if w.old != w.new]
    if not writes:
        return
    tmps = [_tmp_name(w.target) for w in writes]
    body = _record(op, writes, tmps)
    try:
        _write_journal(root, body)
    except OSError as exc:
        with suppress(OSError):
            os.unlink(journal_path(root).with_name(f".journal.{os.getpid()}.tmp"))
        raise _failed(journal_path(root), exc, []) from None
    failpoint("journal-written")
    done: list[FileWrite] = []
    for index, (write, tmp) in enumerate(zip(writes, tmps, strict=True)):
        try:
            replace(write.target, write.new, body["files"][index]["mode"], tmp, index)
        except OSError as exc:
            if write.old is None:
                _remove_dirs(write.new_dirs)
            raise _failed(write.path, exc, _roll_back(root, done)) from None
        done.append(write)
        failpoint(f"replaced-{index}")
    failpoint("committing")
    _drop_journal(root)


def _roll_back(root: Path, done: list[FileWrite]) -> list[str]:
    """Undo `done` (newest first); the journal goes only when every file is back."""
    problems = []
    for write in reversed(done):
        try:
            replace(write.target, write.old, write.mode or NEW_FILE_MODE, _tmp_name(write.target))
            _remove_dirs(write.new_dirs)
        except OSError as exc:
            problems.append(f"{write.path}: {exc}")
    if not problems:
        with suppress(OSError):
            _drop_journal(root)
    return problems


def _remove_dirs(new_dirs: list[str]) -> None:
    """Remove directories a rolled-back write created, innermost first, while they are empty."""
    for directory in reversed(new_dirs):
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
    return BeamError(
        "setupFailed",
        f"could not write {path} ({cause}); every file was left as it was before",
        "free disk space or fix the permissions of that path, then retry",
        {"file": str(path), "errno": exc.errno},
    )


def recover(root: Path) -> Recovery | None:
    """Roll back a transaction a killed process left (the caller holds `setup_lock`)."""
    path = journal_path(root)
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        files = body["files"]
        operation = str(body.get("operation", "setup"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
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


def _recover_file(item: dict[str, Any], recovery: Recovery) -> None:
    target = Path(item["path"])
    with suppress(FileNotFoundError):
        os.unlink(item["tmp"])
    try:
        now = sha(read_now(target))
    except (OSError, UnicodeDecodeError) as exc:
        recovery.conflicts.append({"file": str(target), "reason": f"cannot be read: {exc}"})
        return
    if now == item["old_sha256"]:
        if item["old"] is None:
            _remove_dirs(list(item.get("new_dirs") or []))
        return
    if now != item["new_sha256"]:
        recovery.conflicts.append(
            {"file": str(target), "reason": "changed after the interruption; kept as it is now"}
        )
        return
    mode = item.get("mode") or NEW_FILE_MODE
    replace(target, item["old"], stat.S_IMODE(int(mode)), _tmp_name(target))
    if item["old"] is None:
        _remove_dirs(list(item.get("new_dirs") or []))
    recovery.restored.append(str(target))
