"""Resolving the ``path`` argument of a tool against a workspace root.

Relative paths live under the root and may not leave it; absolute paths may name any file
(dependency sources outside the project). Every resolved file is canonical (symlinks followed),
exists, is a regular file and decodes as UTF-8.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from functools import lru_cache, partial
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, NamedTuple, TypeVar
from urllib.parse import quote_from_bytes, unquote, urlparse

from beam_runtime import canonical, safe_read
from beam_runtime.broker.errors import BrokerError, invalid_input
from beam_runtime.broker.session import edits
from beam_runtime.errors import excerpt

if TYPE_CHECKING:
    from beam_runtime.broker.session.fingerprint import Snapshot, SourceCache, Span

T = TypeVar("T")


class SourceFile(NamedTuple):  # immutable; cheaper to define than a frozen dataclass
    """A Lean source file a tool named, after resolution."""

    root: str
    abs_path: str
    display: str
    uri: str


@lru_cache(maxsize=4096)  # pure; called for the same few files on every tool call
def path_to_uri(abs_path: str) -> str:
    """``Path(abs_path).as_uri()`` for an absolute POSIX path, without pathlib's cost per call."""
    plain = os.sep == "/" and abs_path[:1] == "/" and abs_path[:2] != "//"
    if not plain or os.path.normpath(abs_path) != abs_path:
        return Path(abs_path).as_uri()
    return "file://" + quote_from_bytes(os.fsencode(abs_path))


def uri_to_path(uri: str) -> str | None:
    """The local path behind a ``file:`` URI (percent-decoded), or ``None`` for other schemes."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return os.path.normpath(unquote(parsed.path))


@lru_cache(maxsize=4096)
def display_path(root: str, abs_path: str) -> str:
    """Root-relative POSIX spelling when the file is inside the root, else the absolute path."""
    try:
        rel = os.path.relpath(abs_path, root)
    except ValueError:
        return abs_path
    if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return abs_path
    if os.sep == "/":
        return rel  # relpath output is already normalized
    return PurePosixPath(*Path(rel).parts).as_posix()


def resolve_source(root: str, path: str) -> SourceFile:
    """Resolve ``path`` for the canonical ``root``; ``invalidInput`` when it cannot be used."""
    if not path or "\x00" in path:
        raise invalid_input("path must be a non-empty file path", "invalidPath", path=excerpt(path))
    if os.path.isabs(path):
        candidate = os.path.normpath(path)
    else:
        candidate = os.path.normpath(os.path.join(root, path))
        if candidate != root and not candidate.startswith(root.rstrip(os.sep) + os.sep):
            raise invalid_input(
                f"relative path {excerpt(path)!r} escapes the workspace root {root}",
                "pathEscapesRoot",
                path=excerpt(path),
            )
    found = canonical.existing(candidate)
    if found is None:
        real = os.path.realpath(candidate)
        is_file = os.path.isfile(real)
    else:
        real, is_file = found[0], stat.S_ISREG(found[1])
    if not is_file:
        raise _not_a_file(candidate, path)
    return SourceFile(root, real, display_path(root, real), path_to_uri(real))


def _not_a_file(candidate: str, path: str) -> BrokerError:
    """Why ``candidate`` is no file to read: a directory that hides it names that directory
    (not the file), a name too long is said to be, and anything else is not found."""
    try:
        os.stat(candidate)
    except PermissionError:
        hider = _denying_directory(candidate)
        return invalid_input(
            f"permission denied: this process may not enter {hider}, which holds "
            f"{excerpt(candidate)}",
            "permissionDenied",
            path=excerpt(path),
            directory=hider,
        )
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            return invalid_input(
                f"path is too long: {excerpt(path)}", "invalidPath", path=excerpt(path)
            )
    return invalid_input(f"no such file: {excerpt(candidate)}", "fileNotFound", path=excerpt(path))


def _denying_directory(path: str) -> str:
    """The first directory on the way to ``path`` this process may not search."""
    current = os.sep
    for part in path.split(os.sep)[1:-1]:
        current = os.path.join(current, part)
        if not os.access(current, os.X_OK):
            return current
    return os.path.dirname(path)


async def off_loop(fn: Callable[[], T], name: str) -> T:
    """``fn()``, which touches the file or tree ``name``, off the event loop and bounded like a
    read; one that does not finish in time is the timeout error."""
    try:
        return await safe_read.call_async(fn, name)
    except safe_read.RefusedRead as exc:
        raise _stuck(name, exc) from None


async def off_loop_settle(name: str) -> None:
    """A check the MCP server armed for this call (`safe_read.settle`), run now, bounded like a
    read; a tool that names no file runs it before it touches the session."""
    try:
        await safe_read.settle(name)
    except safe_read.RefusedRead as exc:
        raise _stuck(name, exc) from None


async def resolve_source_async(root: str, path: str) -> SourceFile:
    """`resolve_source` off the event loop and bounded: resolving stats the path, which never
    returns on a stuck mount."""
    return await off_loop(partial(resolve_source, root, path), path)


class SourceMoved(Exception):
    """The name a file was resolved by now leads elsewhere (a symlink or a directory moved)."""

    def __init__(self, source: SourceFile) -> None:
        super().__init__(source.abs_path)
        self.source = source


def _still_resolves(source: SourceFile, name: str) -> None:
    again = resolve_source(source.root, name)
    if again != source:
        raise SourceMoved(again)


async def read_snapshot(
    cache: SourceCache, source: SourceFile, name: str | None = None
) -> Snapshot:
    """The file as `cache` holds it or as read now (checked to be UTF-8), off the event loop.

    With ``name`` (what the caller called the file, resolved earlier to ``source``) the same
    trip off the loop first checks that ``name`` still resolves to ``source``, and raises
    `SourceMoved` with the new resolution when it does not: a caller that remembers
    resolutions then needs one trip per call instead of two.
    """
    before = None if name is None else partial(_still_resolves, source, name)
    try:
        return await cache.aread(source.abs_path, partial(read_source, source), before)
    except OSError as exc:  # the bounded call itself gave up
        raise _unreadable(source, exc) from None


def read_source(source: SourceFile, last: bytes | None = None) -> tuple[bytes, Span | None]:
    """The file's bytes, checked to be UTF-8 (``invalidInput`` otherwise), and what they share
    with ``last``, the last read of the file (valid UTF-8): then only the lines that changed
    are decoded to check them (`edits.check_lines`).

    Synchronous: for the event loop use `read_source_async`.
    """
    data = read_bytes(source)
    if last is None:
        check_utf8(source, data)
        return data, None
    span = edits.byte_span(last, data)
    try:
        edits.check_lines(last, data, span)
    except UnicodeDecodeError as exc:
        raise _not_utf8(source, exc) from exc
    return data, span


async def read_source_async(source: SourceFile) -> bytes:
    """`read_source` off the event loop, bounded in time (`beam_runtime.safe_read`)."""
    data = await read_bytes_async(source)
    check_utf8(source, data)
    return data


def read_bytes(source: SourceFile) -> bytes:
    """The file's bytes, not checked yet; raises ``invalidInput`` when it cannot be read."""
    try:
        return safe_read.read_regular(source.abs_path, safe_read.SOURCE_CAP)
    except OSError as exc:
        raise _unreadable(source, exc) from exc


async def read_bytes_async(source: SourceFile) -> bytes:
    """`read_bytes` in a worker thread: a FIFO, a device or a hung mount never stalls the loop."""
    try:
        return await safe_read.read_async(source.abs_path, safe_read.SOURCE_CAP)
    except OSError as exc:
        raise _unreadable(source, exc) from exc


def _stuck(name: str, exc: OSError) -> BrokerError:
    return BrokerError(
        "timeout", f"cannot read {name}: {exc.strerror}", safe_read.timeout_details()
    )


def _unreadable(source: SourceFile, exc: OSError) -> BrokerError:
    if isinstance(exc, FileNotFoundError):
        return invalid_input(f"no such file: {source.abs_path}", "fileNotFound")
    reason = exc.reason if isinstance(exc, safe_read.RefusedRead) else "unreadable"
    if reason == "timeout":
        return _stuck(source.abs_path, exc)
    return BrokerError(
        "invalidInput",
        f"cannot read {source.abs_path}: {exc.strerror}",
        {"reason": reason},
    )


def check_utf8(source: SourceFile, data: bytes) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(source, exc) from exc


def _not_utf8(source: SourceFile, exc: UnicodeDecodeError) -> BrokerError:
    return invalid_input(
        f"{source.display} is not valid UTF-8 (byte {exc.start})",
        "notUtf8",
        path=source.display,
    )
