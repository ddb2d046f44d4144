"""The structured error every lean-beam command reports (docs/RUNTIME.md: on stderr, exit 1)."""

from __future__ import annotations

from typing import Any

EXCERPT_CHARS = 200


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` itself when short, else its first ``limit`` characters and its length: what an
    error quotes of a value it was given, never the value whole."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


class BeamError(Exception):
    """A failure the user can act on: a stable category, a message and the fix."""

    def __init__(
        self,
        category: str,
        message: str,
        fix: str,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.category = category
        self.message = message
        self.fix = fix
        self.details = details

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "category": self.category,
            "message": self.message,
            "fix": self.fix,
        }
        if self.details is not None:
            body["details"] = self.details
        return {"error": body}

    def to_text(self) -> str:
        return f"error: {self.message}\nfix: {self.fix}"


_ERRNO_CATEGORIES = {
    "ENOSPC": ("diskFull", "free space or inodes (`df -i`) on the file system written, retry"),
    "EDQUOT": ("diskFull", "free space within your disk quota, then retry"),
    "EROFS": ("readOnlyFilesystem", "use a writable location (e.g. pass --install-root)"),
    "EACCES": ("permissionDenied", "fix the permissions of that path, or use another location"),
    "EPERM": ("permissionDenied", "fix the permissions of that path, or use another location"),
    "EMFILE": ("systemError", "raise the limit on open files (`ulimit -n`), then retry"),
    "ENFILE": ("systemError", "close programs to free file descriptors system-wide, then retry"),
}


def system_error(exc: BaseException, doing: str) -> BeamError:
    """An ``OSError`` or ``MemoryError`` that escaped a command, as a categorized error."""
    import errno

    if isinstance(exc, MemoryError):
        return BeamError(
            "outOfMemory",
            f"{doing} ran out of memory",
            "free memory (or raise the process's memory limit), then retry",
        )
    assert isinstance(exc, OSError)
    name = errno.errorcode.get(exc.errno or 0, "")
    category, fix = _ERRNO_CATEGORIES.get(
        name, ("systemError", "fix the cause the message names, then retry")
    )
    # A call on two paths (rename, link) names both: either one's directory may be the one
    # that refused, and naming only the first would name the wrong file.
    where = f" (while handling {exc.filename})" if exc.filename else ""
    if exc.filename2 is not None:
        where = f" (while handling {exc.filename} and {exc.filename2})"
    path = None if exc.filename is None else str(exc.filename)
    if category == "permissionDenied" and path is not None:
        path = denied_path(path)
        where = f" (permission denied on {path})"
        fix = f"make {path} writable for you (chmod u+w {path}, or fix its owner), then retry"
    details: dict[str, Any] = {"errno": name or None, "path": path}
    if exc.filename2 is not None:
        details["other_path"] = str(exc.filename2)
    return BeamError(category, f"{doing} failed: {exc.strerror or exc}{where}", fix, details)


def denied_path(path: str) -> str:
    """The path a permission error is really about: `path` itself when it exists and may not
    be written, else the nearest existing directory above it that may not be written into (a
    file is created, renamed or removed by writing its directory), else one that may not be
    searched; `path` when none of them explains it."""
    import os

    path = os.path.abspath(path)
    if os.path.lexists(path) and not os.path.isdir(path) and not os.access(path, os.W_OK):
        return path
    parent = os.path.dirname(path)
    while not os.path.lexists(parent) and parent != os.path.dirname(parent):
        parent = os.path.dirname(parent)
    if not os.access(parent, os.W_OK | os.X_OK):
        return parent
    above = parent
    while above != os.path.dirname(above):
        above = os.path.dirname(above)
        if not os.access(above, os.X_OK):
            return above
    return path
