"""The per-user key that authenticates ``lean_verify`` receipts.

It lives in ``verify-receipt.key`` under platformdirs' user state directory for ``beam``
(``$XDG_STATE_HOME/beam``, by default ``~/.local/state/beam`` on Linux), never in a receipt. The
first verification creates it: 32 random bytes, hex, written to a private temporary file that is
then hard-linked into place, so the key appears whole or not at all and two processes racing to
create it end up with the same one. It must be a regular file owned by the user with no access
for group or others (mode ``0600``); anything else is refused with a fix rather than trusted.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from beam_runtime.broker.errors import BrokerError

KEY_NAME = "verify-receipt.key"
_KEY_BYTES = 32


def key_path() -> Path:
    import platformdirs  # only receipts need it

    return Path(platformdirs.user_state_dir("beam")) / KEY_NAME


def receipt_key() -> bytes:
    """The key, created on first use; ``BrokerError`` when it cannot be trusted or made."""
    path = key_path()
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    try:
        _create(path)
        return _read(path)
    except OSError as exc:
        raise _problem(path, f"cannot create it: {exc.strerror or exc}") from exc


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _problem(path, "it is not a regular file")
        if info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise _problem(path, f"its mode is {stat.filemode(info.st_mode)}, not -rw-------")
        data = os.read(fd, 4 * _KEY_BYTES + 2).strip()
    finally:
        os.close(fd)
    if len(data) < 2 * _KEY_BYTES:
        raise _problem(path, "it is shorter than a key")
    return data


def _create(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{KEY_NAME}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, secrets.token_hex(_KEY_BYTES).encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temporary, path)  # fails when another process made the key first: keep theirs
    except FileExistsError:
        pass
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _problem(path: Path, problem: str) -> BrokerError:
    return BrokerError(
        "invalidParams",
        f"the receipt key {path} cannot be used: {problem}",
        {
            "reason": "receiptKey",
            "path": str(path),
            "fix": f"remove {path} (a new key is made on the next lean_verify; older receipts "
            "then verify again) or make it a regular file with mode 600",
        },
    )
