"""Which sources a workspace's search covers, and the key its index is stored under.

Three origins: the workspace's own ``.lean`` files (hidden entries, ``.lake`` and
``lake-packages`` left out), every ``.lake/packages/<pkg>`` checkout, and the toolchain's
``src/lean`` when it is installed (elan's toolchain directory for ``lean-toolchain``). The key is
the root with the toolchain, the ``lake-manifest.json`` hash and the index format: a new
toolchain, a changed manifest or a new format starts a fresh index. `sources_of` may block on a
hung mount: callers run it off the event loop, bounded, and its ``touch`` callback learns which
path it is about to touch, so a call given up on can name it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from beam_runtime import safe_read

_SKIPPED_DIRS = {".lake", "lake-packages", "build", "node_modules"}
INDEX_FORMAT = "2"  # the database layout (beam_runtime.search.index); part of the key


@dataclass(frozen=True)
class Stat:
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class Sources:
    root: str
    toolchain: str  # the ``lean-toolchain`` line, or ``none``
    manifest_hash: str  # first 16 hex digits of sha256 of ``lake-manifest.json``, or ``none``
    trees: tuple[str, ...]  # absolute directories to scan

    @property
    def key(self) -> str:
        root = hashlib.sha256(self.root.encode()).hexdigest()[:16]
        rest = f"{self.toolchain}\0{self.manifest_hash}\0{INDEX_FORMAT}".encode()
        return f"{root}-{hashlib.sha256(rest).hexdigest()[:16]}"


def _ignore(path: str) -> None:
    return None


def toolchain_of(root: str, touch: Callable[[str], None] = _ignore) -> str:
    path = os.path.join(root, "lean-toolchain")
    touch(path)
    try:
        data = safe_read.read_regular(path, safe_read.SMALL_CAP)
        return data.decode("utf-8", "replace").strip() or "none"
    except OSError:
        return "none"


def manifest_hash(root: str, touch: Callable[[str], None] = _ignore) -> str:
    path = os.path.join(root, "lake-manifest.json")
    touch(path)
    try:
        data = safe_read.read_regular(path, safe_read.SMALL_CAP)
    except OSError:
        return "none"
    return hashlib.sha256(data).hexdigest()[:16]


def toolchain_sources(toolchain: str, environ: dict[str, str]) -> str | None:
    """``<elan home>/toolchains/<toolchain as elan spells it>/src/lean`` when it exists."""
    if toolchain == "none":
        return None
    home = environ.get("ELAN_HOME") or os.path.join(environ.get("HOME", "~"), ".elan")
    name = toolchain.replace("/", "--").replace(":", "---")
    path = os.path.join(os.path.expanduser(home), "toolchains", name, "src", "lean")
    return path if os.path.isdir(path) else None


def sources_of(
    root: str, environ: dict[str, str], touch: Callable[[str], None] = _ignore
) -> Sources:
    """The sources of ``root``. Package checkouts are the visible entries of
    ``.lake/packages``, not stat'ed here: one on a hung mount stalls only its own tree's walk."""
    trees = [root]
    packages = os.path.join(root, ".lake", "packages")
    touch(packages)
    try:
        names = sorted(os.listdir(packages))
    except OSError:
        names = []
    trees += [os.path.join(packages, name) for name in names if not name.startswith(".")]
    toolchain = toolchain_of(root, touch)
    touch(root)
    lean_src = toolchain_sources(toolchain, environ)
    if lean_src is not None:
        trees.append(lean_src)
    return Sources(root, toolchain, manifest_hash(root, touch), tuple(trees))


Stamp = tuple[tuple[int, int, int, int] | None, ...]


def stamp(root: str) -> Stamp:
    """What `sources_of` depends on inside the root, as cheap ``stat`` fingerprints: the same
    stamp means the same sources, unless a file changed within a timestamp tick of the read
    (see `stamp_changed_ns`)."""
    found: list[tuple[int, int, int, int] | None] = []
    for name in ("lean-toolchain", "lake-manifest.json", os.path.join(".lake", "packages")):
        try:
            info = os.stat(os.path.join(root, name))
        except OSError:
            found.append(None)
            continue
        found.append((info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns))
    return tuple(found)


def stamp_changed_ns(found: Stamp) -> int:
    """The newest modification or change time in a stamp (0 for none)."""
    return max((max(entry[2], entry[3]) for entry in found if entry is not None), default=0)


def lean_files(tree: str) -> Iterator[tuple[str, Stat]]:
    """Every ``.lean`` file under ``tree`` with its stat, hidden and build directories skipped."""
    stack = [tree]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in _SKIPPED_DIRS:
                        stack.append(entry.path)
                elif entry.name.endswith(".lean") and entry.is_file():
                    info = entry.stat()
                    yield entry.path, Stat(info.st_mtime_ns, info.st_size)
            except OSError:
                continue


def display_path(root: str, path: str) -> str:
    """Root-relative inside the root (``/`` separators), else absolute."""
    prefix = root.rstrip(os.sep) + os.sep
    if path.startswith(prefix):
        return path[len(prefix) :].replace(os.sep, "/")
    return path
