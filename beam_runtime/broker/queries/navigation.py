"""Normalizing navigation answers.

Lean answers definitions with ``Location[]`` (from its reference index) or ``LocationLink[]``
(from the file worker); both become ``{uri, path, range}``. Locations inside scratch documents
(speculative probes) are never shown to the caller.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from beam_runtime.broker.session.paths import display_path, uri_to_path

ScratchTest = Callable[[str], bool]


def _never_scratch(_uri: str) -> bool:
    return False


def normalize_location(item: Any, root: str) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    if "targetUri" in item:
        uri = item.get("targetUri")
        rng = item.get("targetSelectionRange") or item.get("targetRange")
    else:
        uri = item.get("uri")
        rng = item.get("range")
    if not isinstance(uri, str) or not isinstance(rng, dict):
        return None
    local = uri_to_path(uri)
    return {"uri": uri, "path": display_path(root, local) if local else None, "range": rng}


def normalize_locations(
    answer: Any, root: str, is_scratch: ScratchTest = _never_scratch
) -> list[dict[str, Any]]:
    """A definition/references answer as a list; a single object or ``null`` is accepted too."""
    if answer is None:
        return []
    items = answer if isinstance(answer, list) else [answer]
    result = []
    for item in items:
        location = normalize_location(item, root)
        if location is not None and not is_scratch(location["uri"]):
            result.append(location)
    return result


def normalize_workspace_symbols(
    answer: Any, root: str, is_scratch: ScratchTest = _never_scratch
) -> list[dict[str, Any]]:
    if not isinstance(answer, list):
        return []
    result = []
    for symbol in answer:
        if not isinstance(symbol, dict):
            continue
        location = normalize_location(symbol.get("location"), root)
        if location is None:
            result.append(symbol)
        elif not is_scratch(location["uri"]):
            result.append({**symbol, "location": location})
    return result
