"""What the sources a verification depends on looked like, so that an edit during it shows.

Before Lake starts, every module of the closure and each receipt-covered file is stat'ed and
read once: inode, size, modification and change time, and the content hash (the hash the
receipt records; the text is kept for the questions asked later). After the last answer the
same is taken again. Lake reads each source somewhere in between, so when nothing differs the
text Lake built is the text hashed. An editor that saves another text and then the old one
again (A-B-A) leaves the content hash equal but not the change time, which no process can set
back: such a file is named in ``changed_during_verify`` and the answer is never ``ok``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from beam_runtime import safe_read
from beam_runtime.broker.verify.save import source_hash

CAP = safe_read.SOURCE_CAP


@dataclass(frozen=True)
class Stamp:
    digest: str  # source hash, "absent" or "unreadable"
    identity: tuple[int, int, int, int] | None  # inode, size, mtime_ns, ctime_ns


def take(paths: dict[str, str]) -> tuple[dict[str, Stamp], dict[str, str]]:
    """A stamp per key of ``paths`` (key -> absolute path), and the texts that could be read."""
    stamps: dict[str, Stamp] = {}
    texts: dict[str, str] = {}
    for key, path in paths.items():
        stamps[key], data = _stamp(path)
        if data is not None:
            texts[key] = data.decode("utf-8", "replace")
    return stamps, texts


def _stamp(path: str) -> tuple[Stamp, bytes | None]:
    try:
        before = os.stat(path)
        data = safe_read.read_regular(path, CAP)
    except FileNotFoundError:
        return Stamp("absent", None), None
    except OSError:
        return Stamp("unreadable", None), None
    identity = (before.st_ino, before.st_size, before.st_mtime_ns, before.st_ctime_ns)
    return Stamp(source_hash(data), identity), data


def changed(before: dict[str, Stamp], paths: dict[str, str]) -> list[str]:
    """The keys whose file is not as ``before`` recorded it."""
    after, _texts = take(paths)
    return [key for key in paths if after.get(key) != before.get(key)]
