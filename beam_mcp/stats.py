"""Per-tool and per-workspace call statistics for `beam_stats`."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

_WINDOW = 512  # latencies kept per tool for the median


@dataclass
class ToolStats:
    count: int = 0
    errors: int = 0
    cancelled: int = 0
    max_ms: float = 0.0
    last_ms: float = 0.0
    recent: deque[float] = field(default_factory=lambda: deque(maxlen=_WINDOW))

    def record(self, ms: float, outcome: str) -> None:
        self.count += 1
        if outcome == "error":
            self.errors += 1
        elif outcome == "cancelled":
            self.cancelled += 1
        self.max_ms = max(self.max_ms, ms)
        self.last_ms = ms
        self.recent.append(ms)

    def to_json(self) -> dict[str, Any]:
        ordered = sorted(self.recent)
        p50 = ordered[len(ordered) // 2] if ordered else 0.0
        return {
            "count": self.count,
            "errors": self.errors,
            "cancelled": self.cancelled,
            "p50_ms": round(p50, 3),
            "max_ms": round(self.max_ms, 3),
            "last_ms": round(self.last_ms, 3),
        }


class Stats:
    def __init__(self) -> None:
        self.started = time.monotonic()
        self.tools: dict[str, ToolStats] = {}
        self.by_root: dict[str, dict[str, ToolStats]] = {}

    def record(self, tool: str, root: str | None, ms: float, outcome: str) -> None:
        _entry(self.tools, tool).record(ms, outcome)
        if root is not None:
            per_root = self.by_root.get(root)
            if per_root is None:
                per_root = self.by_root[root] = {}
            _entry(per_root, tool).record(ms, outcome)

    def forget(self, root: str) -> None:
        self.by_root.pop(root, None)

    def _workspace(self, root: str, described: dict[str, Any]) -> dict[str, Any]:
        """One workspace of ``beam_stats``; ``host`` (shared or in-process) comes with the
        backend's session object and is lifted out of it."""
        session = dict(described)
        host = session.pop("host", None)
        workspace = {
            "root": root,
            "session": session,
            "tools": {n: s.to_json() for n, s in self.by_root.get(root, {}).items()},
            "lean_workers": session.get("lean_workers", {"count": 0, "rss_bytes": 0}),
            "lean": session.get("lean", {}),
        }
        if host is not None:
            workspace["host"] = host
        return workspace

    def to_json(self, sessions: dict[str, dict[str, Any]]) -> dict[str, Any]:
        workspaces = [self._workspace(root, session) for root, session in sorted(sessions.items())]
        return {
            "uptime_ms": int((time.monotonic() - self.started) * 1000),
            "tools": {name: s.to_json() for name, s in self.tools.items()},
            "workspaces": workspaces,
        }


def _entry(table: dict[str, ToolStats], tool: str) -> ToolStats:
    entry = table.get(tool)
    if entry is None:
        entry = table[tool] = ToolStats()
    return entry
