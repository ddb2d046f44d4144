"""Document versions, owned by the broker and monotonic per path for the process.

Lean accepts whatever version the client sends, so the broker is the only authority. Sessions
come and go (drop, idle eviction, restart); this store outlives them, so a version number once
handed out never comes back with different content. A shared host keeps the store on disk
(``record``), so its versions also survive the host itself.
"""

from __future__ import annotations

from collections.abc import Callable


def content_digest(data: bytes) -> str:
    import hashlib  # a millisecond to import; a first sync or hover asks for no digest

    return hashlib.sha256(data).hexdigest()


class VersionStore:
    """Last version issued per canonical path."""

    def __init__(
        self,
        issued: dict[str, int] | None = None,
        record: Callable[[dict[str, int]], None] | None = None,
    ) -> None:
        self._issued: dict[str, int] = dict(issued or {})
        self._record = record  # told every issue, before the version is used

    def next_version(self, abs_path: str) -> int:
        version = self._issued.get(abs_path, 0) + 1
        self._issued[abs_path] = version
        if self._record is not None:
            self._record(self._issued)
        return version

    def last_issued(self, abs_path: str) -> int:
        return self._issued.get(abs_path, 0)
