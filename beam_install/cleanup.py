"""Leftovers of killed installs and prunes, and giving write bits back before deleting."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from beam_runtime import layout


def _writable_dirs(path: Path) -> None:
    """Give directories their owner bits back so their entries can be unlinked.

    Files keep their modes: unlinking needs write access to the directory only.
    """
    os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) | stat.S_IRWXU)
    for current, dirnames, _files in os.walk(path):
        for name in dirnames:
            child = os.path.join(current, name)
            if not os.path.islink(child):
                os.chmod(child, stat.S_IMODE(os.lstat(child).st_mode) | stat.S_IRWXU)


def delete_tree(path: Path) -> None:
    """The one way lean-beam deletes what it wrote: write bits back first, then remove.

    A link or a file is unlinked (never followed); a missing path is fine.
    """
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
        return
    _writable_dirs(path)
    shutil.rmtree(path)


def clean_stale(root: Path) -> list[str]:
    """Remove leftovers of killed installs and prunes (only ever called holding the lock)."""
    cleaned = []
    for directory in (layout.staging_dir(root), layout.trash_dir(root)):
        if not directory.is_dir():
            continue
        for entry in sorted(directory.iterdir()):
            delete_tree(entry)
            cleaned.append(str(entry))
    leftovers = [
        *root.glob(f"{layout.CURRENT_TMP_PREFIX}*"),
        *layout.bin_dir(root).glob(".*.tmp-*"),
    ]
    for entry in sorted(leftovers):
        entry.unlink()
        cleaned.append(str(entry))
    return cleaned
