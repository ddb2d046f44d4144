"""Lean's diagnostics as the broker keeps and reports them.

Diagnostics stay raw JSON from the wire (``lsprotocol`` would drop ``fullRange``, ``leanTags`` and
``isSilent``). Silent editor-only messages are dropped on reception; ranges come from
``fullRange`` because ``range`` is truncated to one line for multi-line messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

Diagnostic = dict[str, Any]

SEVERITY_NAMES = {1: "error", 2: "warning", 3: "information", 4: "hint"}
LOG_LEVELS = {
    "error": "error",
    "warning": "warning",
    "information": "info",
    "hint": "debug",
    "unknown": "info",
}
_COUNT_KEYS = ("error", "warning", "information", "hint", "unknown")

# Texts that mean "the barrier cannot complete until dependencies are rebuilt".
_STALE_MARKERS = (
    "Imports are out of date and should be rebuilt",
    "Imports are out of date and must be rebuilt",
    "Failed to build module dependencies.",
    "target is out-of-date and needs to be rebuilt",
)
# Compiled on first use (``re`` keeps them): a first Lean call may never classify a diagnostic.
_SORRY = r"declaration uses (`sorry`|'sorry')"
_HOLE = r"(?i)don't know how to synthesize (placeholder|implicit)"
_UNSOLVED = r"(?i)^unsolved goals"
_SILENT_TAG = 2
_UNSOLVED_TAG = 1


def is_silent(diagnostic: Diagnostic) -> bool:
    tags = diagnostic.get("leanTags") or []
    return diagnostic.get("isSilent") is True or _SILENT_TAG in tags


def visible(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    return [item for item in diagnostics if isinstance(item, dict) and not is_silent(item)]


def severity_name(diagnostic: Diagnostic) -> str:
    value = diagnostic.get("severity")
    return SEVERITY_NAMES.get(value, "unknown") if isinstance(value, int) else "unknown"


def full_range(diagnostic: Diagnostic) -> dict[str, Any]:
    value = diagnostic.get("fullRange") or diagnostic.get("range")
    if isinstance(value, dict):
        return value
    return {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}


def message_of(diagnostic: Diagnostic) -> str:
    message = diagnostic.get("message", "")
    return message if isinstance(message, str) else str(message)


def is_error(diagnostic: Diagnostic) -> bool:
    return severity_name(diagnostic) == "error"


def is_sorry_warning(diagnostic: Diagnostic) -> bool:
    return bool(re.search(_SORRY, message_of(diagnostic)))


def is_hole(diagnostic: Diagnostic) -> bool:
    return is_error(diagnostic) and bool(re.search(_HOLE, message_of(diagnostic)))


def is_unsolved_goals(diagnostic: Diagnostic) -> bool:
    tags = diagnostic.get("leanTags") or []
    return _UNSOLVED_TAG in tags or bool(re.match(_UNSOLVED, message_of(diagnostic)))


def is_stale_marker(diagnostic: Diagnostic) -> bool:
    """Lean's and Lake's "rebuild first" notices, matched without regard to case."""
    message = message_of(diagnostic).lower()
    return any(marker.lower() in message for marker in _STALE_MARKERS)


def is_setup_line(diagnostic: Diagnostic) -> bool:
    """A ``lake setup-file`` progress line republished by the worker as an information item."""
    if severity_name(diagnostic) != "information" or is_stale_marker(diagnostic):
        return False
    rng = diagnostic.get("range") or {}
    return rng.get("start") == {"line": 0, "character": 0} and rng.get("end") == {
        "line": 1,
        "character": 0,
    }


def completion_blocking(diagnostic: Diagnostic) -> bool:
    """Blocks calling the proof finished: any error, and a ``sorry`` warning."""
    return is_error(diagnostic) or is_sorry_warning(diagnostic)


def to_item(diagnostic: Diagnostic, path: str, uri: str) -> dict[str, Any]:
    """One ``diagnostics.items[]`` entry (also the ``data`` of one ``lean.diagnostic`` log)."""
    return {
        "path": path,
        "uri": uri,
        "severity": severity_name(diagnostic),
        "range": full_range(diagnostic),
        "message": message_of(diagnostic),
        "completion_blocking": completion_blocking(diagnostic),
        "save_blocking": is_error(diagnostic),
    }


def in_scope(item: dict[str, Any], scope: str) -> bool:
    return scope == "all" or item["severity"] == "error"


def counts(diagnostics: Iterable[Diagnostic]) -> dict[str, int]:
    result = dict.fromkeys(_COUNT_KEYS, 0)
    for diagnostic in diagnostics:
        result[severity_name(diagnostic)] += 1
    result["total"] = sum(result[key] for key in _COUNT_KEYS)
    return result


def readiness(diagnostics: list[Diagnostic], fatal: bool) -> dict[str, Any]:
    """``save_ready`` unless an error exists or the header was fatal (no plugin: no messages)."""
    errors = [item for item in diagnostics if is_error(item)]
    if fatal:
        reason = "documentDidNotElaborateSuccessfully"
    elif errors:
        reason = "documentErrors"
    else:
        reason = "ok"
    ready = reason == "ok"
    blocking = [
        {
            "range": full_range(item),
            "severity": "error",
            "message": message_of(item),
            "save_blocking": True,
            "completion_blocking": True,
        }
        for item in errors
    ]
    return {
        "save_ready": ready,
        "reason": reason,
        "blocking_error_count": 0 if ready else max(len(errors), 1 if fatal else 0),
        "blocking_diagnostics": [] if ready else blocking,
        "blocking_messages": [],
    }


def _pos_key(position: dict[str, Any]) -> tuple[int, int]:
    return int(position.get("line", 0)), int(position.get("character", 0))


def overlaps(rng: dict[str, Any], start: tuple[int, int], end: tuple[int, int]) -> bool:
    """Does ``rng`` meet the half-open range [start, end)? An empty range at ``start`` counts."""
    lo, hi = _pos_key(rng["start"]), _pos_key(rng["end"])
    if lo == hi:
        return start <= lo < end or lo == start
    return lo < end and hi > start
