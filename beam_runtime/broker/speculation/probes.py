"""What a probe sends to its scratch document, and how Lean's answer becomes a run result.

Two kinds (docs/BROKER.md, "Speculative execution"):

* **tactic probe** — Lean reports goals at the position. The scratch text is the document up to
  the position, the probe text (later lines indented to the probe's column), and a closing
  ``done`` on its own line at that column. When goals are left, that ``done`` fails with
  "unsolved goals"; that error is the broker's own doing and is not reported.
* **command probe** — anywhere else. The scratch text is the document up to the start of the
  top-level command that holds the position, followed by the probe text.

Only messages that belong to the probe are kept: those whose range lies inside the probe text,
plus (tactic probes) errors that Lean reports later, on the closing line, because of the probe
(a parse error, for instance). Information messages that start with a ``[trace.class]`` tag are
``traces``; the rest are ``messages``. ``success`` means no error was kept and the probe did not
use ``sorry``.

Using ``sorry``: Lean warns "declaration uses `sorry`" once per declaration, on its name, and only
when the declaration has no error. A command probe is its own declaration, so the warning lies in
the probe. A tactic probe's declaration starts before the probe; thanks to the closing ``done`` it
is free of errors exactly when the probe closed every goal, and its warning is then the probe's
doing unless the declaration's text before the probe already holds a ``sorry`` or ``admit``. A
``sorry`` or ``admit`` token in a tactic probe's own text (outside comments and strings) counts
too, since a probe that fills one goal of several with it leaves the declaration with errors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from beam_runtime.broker.session import diagnostics as diag
from beam_runtime.broker.session.text import DocumentText, utf16_to_index

TRACE_TAG = re.compile(r"^\[[A-Za-z_][\w.]*\]")
CLOSING = "done"
USES_SORRY = "usesSorry"
_SORRY_TOKEN = re.compile(r"(?<![\w.'?!])(?:sorry|admit)(?![\w'?!])")
_NOT_CODE = re.compile(r'--[^\n]*|/-.*?-/|"(?:\\.|[^"\\])*"', re.DOTALL)

Point = tuple[int, int]


@dataclass(frozen=True)
class Layout:
    """One scratch text and where the part to report on sits in it."""

    text: str
    start: Point  # first position of the newest probe text
    end: Point  # position just after it
    closing: Point | None  # start of the closing ``done`` (tactic probes)
    owner: Point | None = None  # start of the declaration a tactic probe runs in
    owner_sorry: bool = False  # that declaration's text before the probe says sorry or admit
    probe_sorry: bool = False  # the tactic probe's own text says sorry or admit


def probe_column(doc: DocumentText, line: int, character: int) -> int:
    """Code points before the position on its line: the column continuation lines align to."""
    index = utf16_to_index(doc.lines[line], character)
    return index if index is not None else 0


def tactic_prefix(doc: DocumentText, line: int, character: int) -> tuple[str, int]:
    """Scratch text before a tactic probe, and the column the probe starts at.

    Normally the document up to the position. A position right after other text on its line
    (the end of ``constructor``, or of ``by``) gets a separator so the probe does not glue onto
    that token: a space after ``by`` or a focusing dot, else a new line at the line's indentation.
    """
    cut = doc.index_of(line, character)
    column = probe_column(doc, line, character)
    before = doc.lines[line][:column]
    if not before.strip() or before[-1].isspace():
        return doc.text[:cut], column
    if before.endswith(("by", "·")):
        return doc.text[:cut] + " ", column + 1
    indent = len(before) - len(before.lstrip())
    return doc.text[:cut] + "\n" + " " * indent, indent


def command_boundary(doc: DocumentText, line: int, character: int) -> int:
    """Line that starts the top-level command holding the position.

    A command starts at a line that begins in column 0 with something other than whitespace,
    ``|`` (a match arm) or a comment continuation; attribute and doc-comment lines directly
    above a command belong to it. A position at the very start of a line is its own boundary.
    """
    lines = doc.lines
    if character == 0:
        return line
    start = line
    while start > 0 and not _starts_command(lines[start]):
        start -= 1
    while start > 0 and lines[start - 1].startswith(("@[", "/--")):
        start -= 1
    return start


def _starts_command(text: str) -> bool:
    return bool(text) and not text[0].isspace() and not text.startswith(("|", "-/"))


def indent_continuation(text: str, column: int) -> str:
    """Lines after the first get ``column`` spaces, so a block stays one block."""
    first, *rest = text.rstrip().split("\n")
    pad = " " * column
    return "\n".join([first, *[pad + item if item.strip() else "" for item in rest]])


def tactic_layout(prefix: str, earlier: str, piece: str, column: int) -> Layout:
    """``prefix`` ends at the probe position; ``earlier`` is text a handle already ran."""
    head = prefix + earlier + ("\n" + " " * column if earlier else "")
    body = indent_continuation(piece, column)
    text = f"{head}{body}\n{' ' * column}{CLOSING}\n"
    scratch = DocumentText(text)
    closing = _point(scratch.position_of(len(head) + len(body) + 1 + column))
    owner = declaration_start(prefix)
    return Layout(
        text,
        _point(scratch.position_of(len(head))),
        _point(scratch.position_of(len(head) + len(body))),
        closing,
        _point(scratch.position_of(owner)),
        says_sorry(prefix[owner:] + earlier),
        says_sorry(piece),
    )


def declaration_start(text: str) -> int:
    """Index of the line starting the last top-level command of ``text`` (``command_boundary``'s
    rule, read backwards from the end so a long file costs only its last declaration)."""
    start = text.rfind("\n") + 1
    while start > 0 and not _starts_command(_line_from(text, start)):
        start = text.rfind("\n", 0, start - 1) + 1
    while start > 0:
        above = text.rfind("\n", 0, start - 1) + 1
        if not text.startswith(("@[", "/--"), above):
            break
        start = above
    return start


def _line_from(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def says_sorry(text: str) -> bool:
    """A ``sorry`` or ``admit`` token outside comments and string literals."""
    return bool(_SORRY_TOKEN.search(_NOT_CODE.sub(" ", text)))


def command_layout(prefix: str, earlier: str, piece: str) -> Layout:
    head = prefix + earlier + ("\n" if earlier else "")
    body = piece.rstrip()
    text = f"{head}{body}\n"
    scratch = DocumentText(text)
    return Layout(
        text,
        _point(scratch.position_of(len(head))),
        _point(scratch.position_of(len(head) + len(body))),
        None,
    )


def accumulated(layout: Layout, prefix_len: int) -> str:
    """The probe text a handle keeps: everything between the prefix and the closing part."""
    scratch = DocumentText(layout.text)
    end = scratch.index_of(*layout.end)
    return layout.text[prefix_len:end]


def _point(position: dict[str, int]) -> Point:
    return position["line"], position["character"]


def _range(item: diag.Diagnostic) -> tuple[Point, Point]:
    rng = diag.full_range(item)
    start, end = rng.get("start") or {}, rng.get("end") or {}
    return (
        (int(start.get("line", 0)), int(start.get("character", 0))),
        (int(end.get("line", 0)), int(end.get("character", 0))),
    )


def belongs(item: diag.Diagnostic, layout: Layout) -> bool:
    if diag.is_setup_line(item):
        return False
    start, end = _range(item)
    if start < layout.start:
        return False
    if end <= layout.end:
        return True
    if layout.closing is None:
        return True  # a command probe is the end of its scratch text
    if start >= layout.closing and _closing_noise(item):
        return False
    return diag.is_error(item)


def _closing_noise(item: diag.Diagnostic) -> bool:
    return diag.is_unsolved_goals(item) or diag.is_sorry_warning(item)


def run_result(items: list[diag.Diagnostic], layout: Layout, fatal: bool = False) -> dict[str, Any]:
    """``fatal``: the scratch text's header failed (a bad import), so nothing after it ran; its
    errors are then the probe's outcome even though they lie outside the probe."""
    messages: list[dict[str, str]] = []
    traces: list[str] = []
    kept_sorry = False
    for item in items:
        if not (belongs(item, layout) or (fatal and diag.is_error(item))):
            continue
        severity = diag.severity_name(item)
        text = diag.message_of(item)
        kept_sorry = kept_sorry or diag.is_sorry_warning(item)
        if severity == "information" and TRACE_TAG.match(text):
            traces.append(text)
        else:
            messages.append({"severity": severity, "text": text})
    result: dict[str, Any] = {"success": True, "messages": messages, "traces": traces}
    if any(message["severity"] == "error" for message in messages):
        result["success"] = False
    elif kept_sorry or _tactic_uses_sorry(items, layout):
        result["success"] = False
        result["reason"] = USES_SORRY
    return result


def _tactic_uses_sorry(items: list[diag.Diagnostic], layout: Layout) -> bool:
    """Lean's sorry warning on the declaration a tactic probe ran in, when only the probe can
    have caused it, or a sorry token in the probe text (see the module docstring)."""
    if layout.probe_sorry:
        return True
    if layout.owner is None or layout.owner_sorry:
        return False
    return any(diag.is_sorry_warning(item) and _range(item)[0] >= layout.owner for item in items)
