"""A Lean-aware scan of one source text: its declarations, their full names and signatures.

Not a parser. Comments (nested ``/- -/`` and ``--``) are blanked line by line, ``namespace`` /
``section`` / ``mutual`` ... ``end`` are tracked for full names, and a line that starts with a
declaration keyword (after attributes and modifiers) is a declaration. Its signature is the text
from the name up to ``:=``, ``where``, ``deriving`` or a line starting with ``|``, taken from
lines indented deeper than the keyword's line, with runs of whitespace collapsed. Unnamed
declarations (``example``, anonymous ``instance``) are skipped: nothing can refer to them by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

_MODIFIER = r"(?:private|protected|noncomputable|partial|unsafe|nonrec|scoped|local|public|meta)"
_DECL = re.compile(
    r"^(?P<indent>[ \t]*)(?P<mods>(?:@\[[^\]]*\][ \t]*)*(?:" + _MODIFIER + r"[ \t]+)*)"
    r"(?P<kw>theorem|lemma|def|abbrev|instance|structure|inductive|class[ \t]+inductive|class"
    r"|opaque|axiom)(?![\w'!?.])"
    # the name, after an instance's priority (any other keyword followed by a priority has none)
    r"(?P<priority>[ \t]*\(priority[ \t]*:=[^)]*\))?"
    r"(?:[ \t]*(?P<name>«[^»]*»(?:\.[^\s(\[{:⦃]+)?|[^\s(\[{:⦃«]+))?"
)
_CANDIDATE = re.compile(  # a line that opens a declaration, carries attributes or scopes names
    r"^[ \t]*(?:@\[|(?:theorem|lemma|def|abbrev|instance|structure|inductive|class|opaque|axiom"
    r"|private|protected|noncomputable|partial|unsafe|nonrec|scoped|local|public|meta"
    r"|namespace|section|mutual|end|set_option)(?![\w'!?]))",
    re.MULTILINE,
)
_ATTRIBUTES_ONLY = re.compile(r"^[ \t]*(?:@\[[^\]]*\][ \t]*)+$")
# A stop: ``:=``, ``where`` or ``deriving`` as a whole word, a line starting with ``|``. Each
# branch starts with a literal character (the word's boundary is checked behind its first
# letter), so a search skips ahead to those characters instead of trying every position.
_STOP = re.compile(r":=|w(?<![\w']w)here(?![\w'])|d(?<![\w']d)eriving(?![\w'])|\n[ \t]*\|")
_DEPTH = {**dict.fromkeys("([{⦃⟨", 1), **dict.fromkeys(")]}⦄⟩", -1)}
# A bracket or a stop (no stop contains a bracket, so each is found where it is).
_BRACKET_OR_STOP = re.compile(r"[([{⦃⟨)\]}⦄⟩]|" + _STOP.pattern)
_SKIP_TC = re.compile(r"set_option\s+debug\.skipKernelTC\s+(true|false)(\s+in\b)?")
_MAX_SIGNATURE = 400
_MAX_LINES = 12
_MAX_PREFIX = 4096  # namespaces nested deeper than this many characters add nothing more


class Declaration(NamedTuple):  # immutable; cheaper to build than a frozen dataclass
    name: str  # full name, namespaces included
    kind: str  # the keyword (``class inductive`` is ``class``)
    signature: str  # from the name to the body, as written (whitespace collapsed)
    line: int  # 1-based line of the keyword
    modifiers: str  # attributes and modifiers as written, before the keyword
    skip_kernel_tc: bool  # compiled under ``set_option debug.skipKernelTC true``


def code_lines(text: str) -> list[str]:
    """The text's lines with comments removed (line count and line numbers kept)."""
    out: list[str] = []
    depth = 0
    for line in text.split("\n"):
        if depth == 0 and "-" not in line:
            out.append(line)
        else:
            kept, depth = _strip_comments(line, depth)
            out.append(kept)
    return out


_AT_DEPTH_ZERO = re.compile(r'--|/-|"')
_IN_STRING = re.compile(r'\\.?|"')
_IN_COMMENT = re.compile(r"/-|-/")


def _strip_comments(line: str, depth: int) -> tuple[str, int]:
    """One line with comments blanked, and the comment depth after it (regex steps: linear)."""
    kept: list[str] = []
    index, length = 0, len(line)
    while index < length:
        if depth > 0:
            found = _IN_COMMENT.search(line, index)
            if found is None:
                break
            depth += 1 if found.group() == "/-" else -1
            index = found.end()
            continue
        found = _AT_DEPTH_ZERO.search(line, index)
        if found is None:
            kept.append(line[index:])
            break
        kept.append(line[index : found.start()])
        token = found.group()
        if token == "--":
            break
        if token == "/-":
            depth, index = 1, found.end()
            kept.append(" ")
            continue
        index = _string_end(line, found.end())  # a string literal: kept as written
        kept.append(line[found.start() : index])
    return "".join(kept), depth


def _string_end(line: str, index: int) -> int:
    """Where the string literal whose body starts at ``index`` ends (the line's end at most)."""
    while True:
        found = _IN_STRING.search(line, index)
        if found is None:
            return len(line)
        index = found.end()
        if found.group() == '"':
            return index


@dataclass
class _Scope:
    kind: str
    prefix: str  # the namespaces' full name with a trailing dot, or ""
    skip_kernel_tc: bool


def declarations(text: str) -> list[Declaration]:
    lines = code_lines(text)
    code = "\n".join(lines)
    scopes: list[_Scope] = [_Scope("file", "", False)]
    found: list[Declaration] = []
    pending: list[str] = []  # attribute lines and ``set_option ... in`` just above a declaration
    number, seen_to, last = 0, 0, -1
    for start in _CANDIDATE.finditer(code):  # lines that can matter; the others only end
        number += code.count("\n", seen_to, start.start())  # what is pending
        seen_to = start.start()
        if pending and any(lines[between].strip() for between in range(last + 1, number)):
            pending = []
        last = number
        line = lines[number]
        match = _DECL.match(line)
        if match is not None:
            decl = _declaration(lines, number, match, scopes, " ".join(pending))
            pending = []
            if decl is not None:
                found.append(decl)
            continue
        stripped = line.strip()
        if _ATTRIBUTES_ONLY.match(line) or _in_option(stripped):
            pending.append(stripped)
            continue
        pending = []
        _scoping(stripped, scopes)
    return found


def _in_option(stripped: str) -> bool:
    return stripped.startswith("set_option") and stripped.endswith(" in")


def _scoping(stripped: str, scopes: list[_Scope]) -> None:
    words = stripped.split()
    head = words[0]
    current = scopes[-1]
    if head == "namespace" and len(words) > 1:
        prefix = current.prefix + words[1] + "." if len(current.prefix) < _MAX_PREFIX else ""
        scopes.append(_Scope("namespace", prefix or current.prefix, current.skip_kernel_tc))
    elif "section" in words[:3] and head in ("section", "noncomputable", "public", "private"):
        scopes.append(_Scope("section", current.prefix, current.skip_kernel_tc))
    elif stripped == "mutual":
        scopes.append(_Scope("mutual", current.prefix, current.skip_kernel_tc))
    elif head == "end" and len(scopes) > 1:
        scopes.pop()
    elif head == "set_option":
        option = _SKIP_TC.match(stripped)
        if option is not None and option.group(2) is None:
            current.skip_kernel_tc = option.group(1) == "true"


def _declaration(
    lines: list[str], number: int, match: re.Match[str], scopes: list[_Scope], pending: str
) -> Declaration | None:
    indent, mods, kind, priority, name = match.group("indent", "mods", "kw", "priority", "name")
    if name is None or (priority is not None and kind != "instance"):
        return None
    if kind == "instance":
        if name.startswith(("where", "extends")):
            return None
    elif kind.startswith("class") and kind != "class":
        kind = "class"  # ``class inductive``
    signature = _signature(lines, number, len(indent), match.start("name"))
    modifiers = (pending + " " + mods).strip() if pending else mods.strip()
    skip = scopes[-1].skip_kernel_tc
    if "skipKernelTC" in pending:
        option = _SKIP_TC.search(pending)
        if option is not None:
            skip = option.group(1) == "true"
    root = name.startswith("_root_.")
    name = name[len("_root_.") :] if root else scopes[-1].prefix + name
    return Declaration(name, kind, signature, number + 1, modifiers, skip)


def _signature(lines: list[str], number: int, indent: int, start: int) -> str:
    first = lines[number][start:]
    head = _enough(first) if len(first) > _WINDOW else first  # often the whole signature is
    # on the keyword's line
    if head is not first or _STOP.search(first):
        end = _stop_at_depth_zero(head)
        if end < len(head) or head is not first:
            return " ".join(head[:end].split())[:_MAX_SIGNATURE]
    parts = [first]
    for following in lines[number + 1 : number + _MAX_LINES]:
        body = following.lstrip()
        if not body or (len(following) - len(body) <= indent and not body.startswith("|")):
            break
        parts.append(following)
        if _STOP.search(following) or body.startswith("|"):
            break
    text = _EOL.join(parts)
    if len(text) > _WINDOW:
        text = _enough(text)
    return " ".join(text[: _stop_at_depth_zero(text)].split())[:_MAX_SIGNATURE]


_EOL = "\n"
_WINDOW = 8 * _MAX_SIGNATURE


def _enough(text: str) -> str:
    """A prefix of ``text`` that yields the same signature: one whose words already fill
    ``_MAX_SIGNATURE`` characters makes the rest irrelevant (a generated term may be a single
    line of megabytes)."""
    window = text[:_WINDOW]
    if len(window) < len(text) and len(" ".join(window.split())) > _MAX_SIGNATURE:
        return window
    return text


def _stop_at_depth_zero(text: str) -> int:
    """The first stop (``:=``, ``where``, ...) outside brackets: one pass over the brackets
    and stops in order (linear in the text, however many stops)."""
    depth = 0
    for found in _BRACKET_OR_STOP.finditer(text):
        step = _DEPTH.get(found.group())
        if step is not None:
            depth += step
        elif depth <= 0:
            return found.start()
    return len(text)
