"""Document versions, owned by the broker and monotonic per path for the process (decision 29).

Lean accepts whatever version the client sends, so the broker is the only authority. Sessions
come and go (drop, idle eviction, restart); this store outlives them, so a version number once
handed out never comes back with different content.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


def content_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class VersionStore:
    """Last version issued per canonical path."""

    _issued: dict[str, int] = field(default_factory=dict)

    def next_version(self, abs_path: str) -> int:
        version = self._issued.get(abs_path, 0) + 1
        self._issued[abs_path] = version
        return version

    def last_issued(self, abs_path: str) -> int:
        return self._issued.get(abs_path, 0)
