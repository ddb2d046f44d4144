"""``$/lean/fileProgress`` observations folded into ``document_progress`` (1-based lines)."""

from __future__ import annotations

from typing import Any

FATAL_KIND = 2


class DocumentProgress:
    """What the broker has seen of Lean's progress for one document version."""

    def __init__(self) -> None:
        self.updates = 0
        self.done = True
        self.fatal = False
        self.start_line: int | None = None
        self.end_line: int | None = None

    def observe(self, processing: list[Any]) -> None:
        self.updates += 1
        ranges = [item for item in processing if isinstance(item, dict)]
        self.fatal = any(item.get("kind") == FATAL_KIND for item in ranges)
        active = [item for item in ranges if item.get("kind") != FATAL_KIND]
        self.done = not active
        if self.done:
            self.start_line = None
        else:
            starts = [_line(item, "start") for item in active]
            self.start_line = min(starts) + 1
        ends = [_end_line(item) for item in ranges]
        if ends:
            self.end_line = max(ends)

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {"updates": self.updates, "done": self.done}
        if self.start_line is not None and not self.done:
            result["range_start_line"] = self.start_line
        if self.end_line is not None:
            result["range_end_line"] = self.end_line
        return result


def _line(item: dict[str, Any], key: str) -> int:
    return int(((item.get("range") or {}).get(key) or {}).get("line", 0))


def _end_line(item: dict[str, Any]) -> int:
    """Last 1-based line Lean still covers: an end at column 0 stops on the previous line."""
    end = (item.get("range") or {}).get("end") or {}
    line, character = int(end.get("line", 0)), int(end.get("character", 0))
    return line if character == 0 and line > 0 else line + 1
