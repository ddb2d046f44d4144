"""Undoing exactly what setup inserted into a client's file, byte for byte.

Adding our entry changes a file in one place. `diff` records that place as the text that was
there (`before`, often nothing or a little white space) and the text put there (`after`: our
entry, its separators, and any table or object created to hold it). `undo` finds `after` once
in the file as it is now and puts `before` back: every byte setup did not write (final newline
or none, CRLF, indentation, comments) comes back, even after the client changed other parts of
its file. The caller checks that the result parses to what removing the entry structurally
gives; when it does not, or `after` is not found exactly once (the client reformatted our
entry), it removes the entry structurally instead. `rebase` carries a splice across a later
rewrite of our own entry (new root path, new timeouts).

`with_file_newlines` makes the text setup inserts use the file's own line ending (CRLF files
stay CRLF).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Splice:
    before: str
    after: str

    def to_json(self) -> dict[str, str]:
        return {"before": self.before, "after": self.after}

    @classmethod
    def from_json(cls, body: Any) -> Splice | None:
        if not isinstance(body, dict):
            return None
        before, after = body.get("before"), body.get("after")
        if not isinstance(before, str) or not isinstance(after, str) or not after:
            return None
        return cls(before, after)


def _window(old: str, new: str) -> tuple[int, int, int]:
    """(prefix, old end, new end): `old[prefix:old_end]` became `new[prefix:new_end]`."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    return prefix, len(old) - suffix, len(new) - suffix


def diff(old: str, new: str) -> Splice | None:
    """The one change that turns `old` into `new` (None when they are equal)."""
    prefix, old_end, new_end = _window(old, new)
    after = new[prefix:new_end]
    return Splice(old[prefix:old_end], after) if after else None


def undo(text: str, splice: Splice) -> str | None:
    """`text` with the one occurrence of `splice.after` replaced by `splice.before`."""
    at = text.find(splice.after)
    if at < 0 or text.find(splice.after, at + 1) >= 0:
        return None
    return text[:at] + splice.before + text[at + len(splice.after) :]


def rebase(splice: Splice, old: str, new: str) -> Splice | None:
    """The splice from the original text to `new`, when `old` still holds `splice`."""
    base = undo(old, splice)
    return None if base is None else diff(base, new)


def _crlf(text: str) -> bool:
    return "\r\n" in text and text.count("\r\n") == text.count("\n")


def with_file_newlines(old: str, new: str) -> str:
    """`new` with the text it adds to `old` written in `old`'s line ending."""
    if not _crlf(old):
        return new
    prefix, _old_end, new_end = _window(old, new)
    if prefix and new[prefix - 1] == "\r":  # never split a CRLF pair
        prefix -= 1
    if new_end < len(new) and new[new_end] == "\n" and new[new_end - 1 : new_end] == "\r":
        new_end += 1
    added = new[prefix:new_end].replace("\r\n", "\n").replace("\n", "\r\n")
    return new[:prefix] + added + new[new_end:]
