"""The ``didChange`` content change from one text to the next: one range edit, or the whole text.

Lean holds LF text and counts ``character`` in UTF-16 code units. The edit replaces what lies
between the common start and the common end of the two texts; when that replaced part is more
than half of the new file, the whole text is cheaper for both sides.

A file without carriage returns is diffed as UTF-8 bytes (`byte_change`), in proportion to the
edit rather than the file: the common start and end are found once, compared in place (a memcmp
through a memoryview, no copies; the reader finds them while it checks the new bytes:
`byte_span`, `check_lines`); only the changed lines are decoded; the line number of the edit is
counted from the document's anchor, the start of the line of the previous edit (`Anchor`), not
from the top of the file. A file with carriage returns goes through its decoded, LF-normalized
text (`content_change`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from beam_runtime.broker.session.text import utf16_len

FIRST_STEP = 1 << 12  # characters compared at once at first; the step doubles while equal
# ... up to this: a larger slice is its own mmap (fresh pages each time), which costs more
# than the loop turns it saves
MAX_STEP = 1 << 15

Span = tuple[int, int]  # bytes the old and new texts share at the start, and at the end


class Anchor(NamedTuple):
    """A byte offset into a document's text and the number of line breaks before it."""

    offset: int = 0
    line: int = 0


def common_start(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Length of the longest common prefix, in slices compared in C (no loop per character)."""
    limit = min(len(a), len(b))
    low, step = 0, FIRST_STEP
    while low < limit:
        high = min(limit, low + step)
        if a[low:high] != b[low:high]:
            return _first_difference(a, b, low, high)
        low, step = high, min(step * 2, MAX_STEP)
    return limit


def common_end(a: Sequence[Any], b: Sequence[Any], limit: int) -> int:
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


def _first_difference(a: Sequence[Any], b: Sequence[Any], low: int, high: int) -> int:
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


# -- UTF-8 bytes ---------------------------------------------------------------------------


def _inside(data: bytes, index: int) -> bool:
    """Whether ``index`` falls inside a UTF-8 character (on a continuation byte)."""
    return index < len(data) and data[index] & 0xC0 == 0x80


def byte_span(old: bytes, new: bytes) -> Span:
    """The bytes two UTF-8 texts share at the start and at the end, cut back to character
    boundaries in both and never overlapping."""
    start = shared_start(old, new)
    while start and (_inside(new, start) or _inside(old, start)):
        start -= 1
    end = shared_end(old, new, min(len(old), len(new)) - start)
    while end and _inside(new, len(new) - end):  # the shared end is the same bytes in both
        end -= 1
    return start, end


def shared_start(a: bytes, b: bytes) -> int:
    """`common_start` for bytes, without copies: ``startswith`` with a memoryview of ``b``
    compares in place (a memcmp), so a binary search compares about ``len`` bytes in all."""
    view = memoryview(b)
    low, high = 0, min(len(a), len(b))
    if a.startswith(view[:high]):
        return high
    while high - low > 1:  # a[:low] == b[:low], a[:high] != b[:high]
        mid = (low + high) // 2
        if a.startswith(view[low:mid], low):
            low = mid
        else:
            high = mid
    return low


def shared_end(a: bytes, b: bytes, limit: int) -> int:
    """`common_end` for bytes, at most ``limit``, compared in place like `shared_start`."""
    view, la, lb = memoryview(b), len(a), len(b)
    if a.startswith(view[lb - limit :], la - limit):
        return limit
    low, high = 0, limit  # the last ``low`` bytes agree, the last ``high`` do not
    while high - low > 1:
        mid = (low + high) // 2
        if a.startswith(view[lb - mid : lb - low], la - mid):
            low = mid
        else:
            high = mid
    return low


def check_lines(old_valid: bytes, new: bytes, span: Span) -> None:
    """Raise ``UnicodeDecodeError`` (offsets into ``new``) unless ``new`` is valid UTF-8,
    given that ``old_valid`` is and that they share ``span``: only the changed lines are
    decoded (a line break is a character boundary, so what lies around them is valid)."""
    start, end = span
    first = new.rfind(b"\n", 0, start) + 1
    last = new.find(b"\n", len(new) - end)
    if last < 0:
        last = len(new)
    try:
        new[first:last].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnicodeDecodeError(
            exc.encoding, new, first + exc.start, first + exc.end, exc.reason
        ) from None


def lines_before(data: bytes, offset: int, anchor: Anchor) -> int:
    """Line breaks in ``data`` before ``offset``, counted from the anchor or from the top of the
    file, whichever is nearer."""
    if offset >= anchor.offset:
        return anchor.line + data.count(b"\n", anchor.offset, offset)
    if offset <= anchor.offset - offset:
        return data.count(b"\n", 0, offset)
    return anchor.line - data.count(b"\n", offset, anchor.offset)


def byte_change(
    old: bytes, new: bytes, span: Span | None, anchor: Anchor
) -> tuple[dict[str, Any], bool, Anchor]:
    """`content_change` for LF texts given as UTF-8 bytes (``span``: `byte_span` of the two,
    when the reader found it), and the anchor that holds for ``new`` afterwards."""
    start, end = byte_span(old, new) if span is None else span
    old_end, new_end = len(old) - end, len(new) - end
    if (old_end - start) + (new_end - start) > len(new) // 2 and len(new) > 0:
        return {"text": new.decode("utf-8")}, False, Anchor()
    head = old.rfind(b"\n", 0, start) + 1
    line = lines_before(old, head, anchor)
    first = {"line": line, "character": utf16_len(old[head:start].decode("utf-8"))}
    breaks = old.count(b"\n", start, old_end)
    tail = old.rfind(b"\n", start, old_end) + 1 if breaks else head
    last = {"line": line + breaks, "character": utf16_len(old[tail:old_end].decode("utf-8"))}
    inserted = new[start:new_end].decode("utf-8")
    return {"range": {"start": first, "end": last}, "text": inserted}, True, Anchor(head, line)
