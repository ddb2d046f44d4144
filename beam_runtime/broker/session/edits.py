"""The ``didChange`` content change from one text to the next: one range edit, or the whole text.

Both texts are as Lean holds them (LF line ends). The edit replaces what lies between the
common start and the common end of the two texts; positions count UTF-16 code units. When that
replaced part is more than half of the new file, the whole text is cheaper for both sides.
"""

from __future__ import annotations

from typing import Any

from beam_runtime.broker.session.text import utf16_len

FIRST_STEP = 1 << 12  # characters compared at once at first; the step doubles while equal
# ... up to this: a larger slice is its own mmap (fresh pages each time), which costs more
# than the loop turns it saves
MAX_STEP = 1 << 15


def common_start(a: str, b: str) -> int:
    """Length of the longest common prefix, in slices compared in C (no loop per character)."""
    limit = min(len(a), len(b))
    low, step = 0, FIRST_STEP
    while low < limit:
        high = min(limit, low + step)
        if a[low:high] != b[low:high]:
            return _first_difference(a, b, low, high)
        low, step = high, min(step * 2, MAX_STEP)
    return limit


def common_end(a: str, b: str, limit: int) -> int:
    """Length of the longest common suffix, at most ``limit`` characters."""
    la, lb = len(a), len(b)
    done, step = 0, FIRST_STEP
    while done < limit:
        more = min(limit, done + step)
        if a[la - more : la - done] != b[lb - more : lb - done]:
            low, high = done, more  # the suffix length lies in [done, more)
            while high - low > 1:
                mid = (low + high) // 2
                if a[la - mid : la - done] == b[lb - mid : lb - done]:
                    low = mid
                else:
                    high = mid
            return low
        done, step = more, min(step * 2, MAX_STEP)
    return limit


def _first_difference(a: str, b: str, low: int, high: int) -> int:
    """The first index in ``[low, high)`` where the texts differ (they do somewhere there)."""
    while high - low > 1:
        mid = (low + high) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid
    return low


def position(text: str, index: int, line: int | None = None, after: int = 0) -> dict[str, int]:
    """The LSP position of ``index`` in ``text``; ``line`` is that of ``after`` when known."""
    if line is None:
        line = text.count("\n", 0, index)
    else:
        line += text.count("\n", after, index)
    start = text.rfind("\n", 0, index) + 1
    return {"line": line, "character": utf16_len(text[start:index])}


def content_change(old: str, new: str) -> tuple[dict[str, Any], bool]:
    """The one content change that turns ``old`` into ``new``, and whether it is a range edit."""
    start = common_start(old, new)
    end = common_end(old, new, min(len(old), len(new)) - start)
    removed = len(old) - end - start
    inserted = new[start : len(new) - end]
    if removed + len(inserted) > len(new) // 2 and len(new) > 0:
        return {"text": new}, False
    first = position(old, start)
    last = position(old, len(old) - end, first["line"], start)
    return {"range": {"start": first, "end": last}, "text": inserted}, True
