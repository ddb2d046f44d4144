"""Text handling: UTF-16 positions, incremental edits, and splitting Lean source into commands."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

IDENT_RE = re.compile(r"[^\W\d][\w'!?₀-₉]*(?:\.[^\W\d][\w'!?₀-₉]*)*")
HEADER_RE = re.compile(r"^(?:public\s+)?(?:import|module|prelude)\b")


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def to_utf16(line: str, index: int) -> int:
    return utf16_len(line[:index])


def from_utf16(line: str, units: int) -> int:
    """The code-point index of a UTF-16 column, clamped to the line."""
    count = 0
    for index, char in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(char) > 0xFFFF else 1
    return len(line)


@dataclass(frozen=True, order=True)
class Pos:
    """A position as (line, code-point index); converted to UTF-16 only on the wire."""

    line: int
    col: int


def normalize(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_lines(text: str) -> list[str]:
    return text.split("\n")


def offset_of(lines: list[str], line: int, units: int) -> int:
    """Code-point offset in the joined text of an LSP position."""
    if line >= len(lines):
        return sum(len(item) + 1 for item in lines) - 1
    base = sum(len(item) + 1 for item in lines[:line])
    return base + from_utf16(lines[line], units)


def apply_change(text: str, change: dict[str, Any]) -> str:
    """Apply one ``TextDocumentContentChangeEvent`` (full or ranged, UTF-16)."""
    new_text = normalize(change.get("text", ""))
    rng = change.get("range")
    if rng is None:
        return new_text
    lines = split_lines(text)
    start = offset_of(lines, rng["start"]["line"], rng["start"]["character"])
    end = offset_of(lines, rng["end"]["line"], rng["end"]["character"])
    return text[:start] + new_text + text[max(start, end) :]


def lsp_pos(lines: list[str], pos: Pos) -> dict[str, int]:
    if pos.line >= len(lines):
        return {"line": pos.line, "character": 0}
    return {"line": pos.line, "character": to_utf16(lines[pos.line], pos.col)}


def lsp_range(lines: list[str], start: Pos, end: Pos) -> dict[str, dict[str, int]]:
    return {"start": lsp_pos(lines, start), "end": lsp_pos(lines, end)}


def from_lsp(lines: list[str], position: dict[str, Any]) -> Pos:
    line = int(position["line"])
    if line >= len(lines):
        return Pos(line, 0)
    return Pos(line, from_utf16(lines[line], int(position["character"])))


def eof(lines: list[str]) -> Pos:
    return Pos(len(lines) - 1, len(lines[-1]))


@dataclass(frozen=True)
class Command:
    """One top-level command: a column-0 line plus its indented or blank continuation lines."""

    start: int
    end: int  # last line (inclusive) holding text of this command
    text: str  # lines start..end joined with newlines
    key: str  # identifies the command together with everything before it


def _starts_command(line: str) -> bool:
    return bool(line) and not line[0].isspace()


def split_commands(lines: list[str]) -> tuple[int, list[Command]]:
    """Split into the header's last line (exclusive) and the commands after it.

    Commands start at non-blank column-0 lines; a ``/- ... -/`` block stays in one command.
    """
    import hashlib

    starts: list[int] = []
    in_block = False
    for number, line in enumerate(lines):
        if not in_block and _starts_command(line):
            starts.append(number)
        in_block = _block_state(line, in_block)
    header_end = 0
    for number in starts:
        stripped = lines[number].strip()
        if HEADER_RE.match(stripped) or stripped.startswith("--") or stripped.startswith("/-"):
            if HEADER_RE.match(stripped):
                header_end = _last_text_line(lines, number, starts) + 1
            continue
        break
    commands: list[Command] = []
    digest = hashlib.sha1("\n".join(lines[:header_end]).encode())
    bounds = [s for s in starts if s >= header_end]
    for index, start in enumerate(bounds):
        end = _last_text_line(lines, start, bounds[index + 1 :] or [len(lines)])
        text = "\n".join(lines[start : end + 1])
        digest.update(b"\0" + text.encode())
        commands.append(Command(start, end, text, digest.copy().hexdigest()))
    return header_end, commands


def _block_state(line: str, in_block: bool) -> bool:
    opens = line.count("/-")
    closes = line.count("-/")
    if in_block:
        return closes < opens + 1
    return opens > closes


def _last_text_line(lines: list[str], start: int, later: list[int]) -> int:
    stop = next((s for s in later if s > start), len(lines))
    end = start
    for number in range(start, stop):
        if lines[number].strip():
            end = number
    return end


def idents(line: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of every identifier-like token on a line, ignoring comments/strings."""
    out: list[tuple[int, int, str]] = []
    code = strip_comment(line)
    for match in IDENT_RE.finditer(code):
        out.append((match.start(), match.end(), match.group(0)))
    return out


def strip_comment(line: str) -> str:
    """The line with a trailing ``--`` comment and string literals blanked out (same length)."""
    out = []
    in_string = False
    index = 0
    while index < len(line):
        char = line[index]
        if not in_string and line.startswith("--", index):
            out.append(" " * (len(line) - index))
            break
        if char == '"':
            in_string = not in_string
            out.append(char)
        else:
            out.append(" " if in_string else char)
        index += 1
    return "".join(out)
