"""Validation and canonicalization of the local workspace descriptor.

A call's root is canonicalized off the event loop (a root on a stuck mount must stall nothing).
The server remembers what each root as given canonicalized to (`KnownRoots`); a later call on
the same root starts at once with the remembered name and checks it again inside its first
bounded trip off the loop, the one that stats or reads its file (`check_root`, riding along as a
``safe_read.Prelude``): one trip per call instead of two. A root that no longer leads to the
same project raises `RootMoved`, and the server canonicalizes it afresh and runs the call again.
"""

from __future__ import annotations

import os
import stat
from collections import OrderedDict
from collections.abc import Callable
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


class RootMoved(Exception):
    """A remembered canonical root no longer holds for the root as given."""


def check_root(given: str, known: str) -> None:
    """Off the loop: `given` still canonicalizes to `known`, or `RootMoved`."""
    try:
        again = canonical_root(given)
    except ToolError:
        raise RootMoved(given) from None
    if again != known:
        raise RootMoved(given)


class KnownRoots:
    """Roots as given -> their canonical names, the newest `size` of them."""

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._known: OrderedDict[str, str] = OrderedDict()

    def get(self, given: str) -> str | None:
        return self._known.get(given)

    def remember(self, given: str, canonical: str) -> None:
        self._known[given] = canonical
        self._known.move_to_end(given)
        while len(self._known) > self._size:
            self._known.popitem(last=False)

    def forget(self, given: str) -> None:
        self._known.pop(given, None)


async def check_root_async(given: str, check: Callable[[], None]) -> None:
    """`check` (a bound `check_root`) off the event loop and bounded, when no trip of the call
    took it along; raises `RootMoved`, or the timeout tool error on a stuck mount."""
    try:
        await safe_read.call_async(check, given)
    except safe_read.RefusedRead as exc:
        message = f"workspace root {given} did not answer: {exc.strerror}"
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
