"""The atomic `current` switch: a new relative link `.current.tmp-<hex>`, then `os.replace`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from beam_runtime import layout
from beam_runtime.install_root import InstallRoot


def current_id(root: Path) -> str | None:
    """The runtime id `<root>/current` names, or None when it is missing or not ours."""
    return InstallRoot(root).current_id()


def switch_current(
    root: Path, runtime_id: str, before_replace: Callable[[], None] | None = None
) -> None:
    """Point `current` at `versions/<id>` atomically and durably.

    `before_replace` runs between creating the new link and the rename (a test failpoint).
    """
    tmp = root / f"{layout.CURRENT_TMP_PREFIX}{os.urandom(4).hex()}"
    os.symlink(f"versions/{runtime_id}", tmp)
    if before_replace is not None:
        before_replace()
    os.replace(tmp, layout.current_link(root))
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
