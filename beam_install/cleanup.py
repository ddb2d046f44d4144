"""Leftovers of killed installs and prunes, and giving write bits back before deleting."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from beam_runtime import layout


def make_writable(tree: Path) -> None:
    """Give the owner write access back (prune calls this before deleting a runtime)."""
    for current, dirs, files in os.walk(tree):
        for name in dirs + files:
            path = os.path.join(current, name)
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode):
                os.chmod(path, stat.S_IMODE(mode) | stat.S_IWUSR)


def clean_stale(root: Path) -> list[str]:
    """Remove leftovers of killed installs and prunes (only ever called holding the lock)."""
    cleaned = []
    for directory in (layout.staging_dir(root), layout.trash_dir(root)):
        if not directory.is_dir():
            continue
        for entry in sorted(directory.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                make_writable(entry)
                shutil.rmtree(entry)
            else:
                entry.unlink()
            cleaned.append(str(entry))
    leftovers = [
        *root.glob(f"{layout.CURRENT_TMP_PREFIX}*"),
        *layout.bin_dir(root).glob(".*.tmp-*"),
    ]
    for entry in sorted(leftovers):
        entry.unlink()
        cleaned.append(str(entry))
    return cleaned
