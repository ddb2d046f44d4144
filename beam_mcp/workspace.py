"""Validation and canonicalization of the local workspace descriptor."""

from __future__ import annotations

import os
import stat
from functools import partial

from beam_mcp.errors import ToolError
from beam_runtime import canonical, safe_read

PROJECT_MARKERS = ("lean-toolchain", "lakefile.lean", "lakefile.toml")


def canonical_root(root: str, *, allow_vanished: bool = False) -> str:
    """The canonical absolute root of a Lean project, or an `invalidInput` tool error.

    With `allow_vanished` (cache eviction), a root that no longer exists or lost its project
    files is still accepted and normalized as far as the filesystem allows.
    """
    check_root_text(root)
    found = canonical.existing(root)
    if found is None:
        return _slow_canonical_root(root, allow_vanished)
    name, mode = found
    if allow_vanished:
        return name
    if not stat.S_ISDIR(mode):
        raise _invalid(f"workspace root is not a directory: {root}", root, "notDirectory")
    return _project_root(root, name)


def check_root_text(root: str) -> None:
    """What can be told of a root without touching the filesystem: absolute, no NUL."""
    if not root or not os.path.isabs(root):
        raise _invalid("workspace root must be an absolute path", root, "notAbsolute")
    if "\x00" in root:
        raise _invalid("workspace root contains a NUL character", root, "invalidPath")


async def canonical_root_async(root: str, *, allow_vanished: bool = False) -> str:
    """`canonical_root` off the event loop, bounded like every read of a named path: a root on
    a stuck mount is the timeout tool error, and other calls go on meanwhile."""
    check_root_text(root)
    try:
        return await safe_read.call_async(
            partial(canonical_root, root, allow_vanished=allow_vanished), root
        )
    except safe_read.RefusedRead as exc:
        message = f"workspace root {root} did not answer: {exc.strerror}"
        raise ToolError("timeout", message, safe_read.timeout_details()) from None


def _slow_canonical_root(root: str, allow_vanished: bool) -> str:
    name = os.path.realpath(root)
    if allow_vanished:
        return name
    try:
        is_dir = stat.S_ISDIR(os.stat(name).st_mode)
    except (OSError, ValueError):
        raise _invalid(f"workspace root does not exist: {root}", root, "notFound") from None
    if not is_dir:
        raise _invalid(f"workspace root is not a directory: {root}", root, "notDirectory")
    return _project_root(root, name)


def _project_root(root: str, name: str) -> str:
    if not any(os.path.isfile(os.path.join(name, m)) for m in PROJECT_MARKERS):
        raise _invalid(
            f"workspace root is not a Lean project (no {', '.join(PROJECT_MARKERS)}): {root}",
            root,
            "notLeanProject",
        )
    return name


def _invalid(message: str, root: str, reason: str) -> ToolError:
    return ToolError("invalidInput", message, {"reason": reason, "root": root})
