"""The byte budget of one tool result: cutting an oversized body in a stable way.

A body whose text is over budget is cut in three steps, each the largest cut that fits: every
array is capped at a common length (so the longest lists lose items first, from the end), then,
with arrays at one item, every string is capped at a common length, and finally arrays are
emptied. The body then carries ``truncated: {<dotted field>: <items or characters omitted>}``;
indices in the dotted names are those of the uncut body. Standard library only (cold start).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

TRUNCATED = "truncated"
# Strings an agent passes back verbatim are never shortened.
_WHOLE = frozenset(("id", "uri", "root", "path", "code", "reason", "kind", "module"))

Size = Callable[[Any], int]


def bound(body: dict[str, Any], budget: int, size: Size) -> dict[str, Any]:
    """``body`` itself when it fits, else the largest cut of it that fits (or the smallest)."""
    if size(body) <= budget:
        return body
    longest_list = _longest(body, list)
    fitted = _search(body, budget, size, 1, longest_list, lambda cap: (cap, None))
    if fitted is not None:
        return fitted
    longest_text = _longest(body, str)
    fitted = _search(body, budget, size, 0, longest_text, lambda cap: (1, cap))
    if fitted is not None:
        return fitted
    return _cut(body, 0, 0)


def _search(
    body: dict[str, Any],
    budget: int,
    size: Size,
    low: int,
    high: int,
    caps: Callable[[int], tuple[int, int | None]],
) -> dict[str, Any] | None:
    """The cut with the largest cap in ``[low, high)`` that fits, by bisection."""
    best: dict[str, Any] | None = None
    high -= 1
    while low <= high:
        middle = (low + high) // 2
        candidate = _cut(body, *caps(middle))
        if size(candidate) <= budget:
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    return best


def _longest(node: Any, kind: type) -> int:
    if isinstance(node, dict):
        items = [v for k, v in node.items() if k not in _WHOLE]
        own = 0
    elif isinstance(node, list):
        items, own = node, len(node) if kind is list else 0
    else:
        return len(node) if kind is str and isinstance(node, str) else 0
    return max([own, *(_longest(item, kind) for item in items)])


def _cut(body: dict[str, Any], list_cap: int, text_cap: int | None) -> dict[str, Any]:
    omitted: dict[str, int] = {}
    cut = _walk(body, "", list_cap, text_cap, omitted)
    return {**cut, TRUNCATED: omitted}


def _walk(node: Any, at: str, list_cap: int, text_cap: int | None, omitted: dict[str, int]) -> Any:
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in _WHOLE and isinstance(value, str):
                out[key] = value
            else:
                out[key] = _walk(value, _join(at, key), list_cap, text_cap, omitted)
        return out
    if isinstance(node, list):
        if len(node) > list_cap:
            omitted[at] = len(node) - list_cap
        kept = node[:list_cap]
        return [
            _walk(v, _join(at, str(i)), list_cap, text_cap, omitted) for i, v in enumerate(kept)
        ]
    if isinstance(node, str) and text_cap is not None and len(node) > text_cap:
        omitted[at] = len(node) - text_cap
        return node[:text_cap]
    return node


def _join(at: str, key: str) -> str:
    return f"{at}.{key}" if at else key
