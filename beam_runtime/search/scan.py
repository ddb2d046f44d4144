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

_MODIFIER = r"(?:private|protected|noncomputable|partial|unsafe|nonrec|scoped|local|public|meta)"
_DECL = re.compile(
    r"^(?P<indent>[ \t]*)(?P<mods>(?:@\[[^\]]*\][ \t]*)*(?:" + _MODIFIER + r"[ \t]+)*)"
    r"(?P<kw>theorem|lemma|def|abbrev|instance|structure|inductive|class[ \t]+inductive|class"
    r"|opaque|axiom)(?![\w'!?.])"
)
_ATTRIBUTES_ONLY = re.compile(r"^[ \t]*(?:@\[[^\]]*\][ \t]*)+$")
_PRIORITY = re.compile(r"[ \t]*\(priority[ \t]*:=[^)]*\)")
_NAME = re.compile(r"[ \t]*(«[^»]*»(?:\.[^\s(\[{:⦃]+)?|[^\s(\[{:⦃«]+)")
_STOP = re.compile(r":=|(?<![\w'])where(?![\w'])|(?<![\w'])deriving(?![\w'])|\n[ \t]*\|")
_OPENERS, _CLOSERS = "([{⦃⟨", ")]}⦄⟩"
_SKIP_TC = re.compile(r"set_option\s+debug\.skipKernelTC\s+(true|false)(\s+in\b)?")
_MAX_SIGNATURE = 400
_MAX_LINES = 12


@dataclass(frozen=True, slots=True)
class Declaration:
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


def _strip_comments(line: str, depth: int) -> tuple[str, int]:
    kept: list[str] = []
    index, length = 0, len(line)
    in_string = False
    while index < length:
        pair = line[index : index + 2]
        if depth > 0:
            if pair == "-/":
                depth, index = depth - 1, index + 2
            elif pair == "/-":
                depth, index = depth + 1, index + 2
            else:
                index += 1
            continue
        char = line[index]
        if in_string:
            kept.append(char)
            if char == "\\":
                kept.append(line[index + 1 : index + 2])
                index += 1
            elif char == '"':
                in_string = False
        elif pair == "--":
            break
        elif pair == "/-":
            depth, index = 1, index + 2
            kept.append(" ")
            continue
        else:
            kept.append(char)
            in_string = char == '"'
        index += 1
    return "".join(kept), depth


@dataclass
class _Scope:
    kind: str
    names: tuple[str, ...]
    skip_kernel_tc: bool


def declarations(text: str) -> list[Declaration]:
    lines = code_lines(text)
    scopes: list[_Scope] = [_Scope("file", (), False)]
    found: list[Declaration] = []
    pending = ""  # attribute lines and ``set_option ... in`` just above a declaration
    for number, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        match = _DECL.match(line)
        if match is not None:
            decl = _declaration(lines, number, match, scopes, pending)
            pending = ""
            if decl is not None:
                found.append(decl)
            continue
        if _ATTRIBUTES_ONLY.match(line) or _in_option(stripped):
            pending += " " + stripped
            continue
        pending = ""
        _scoping(stripped, scopes)
    return found


def _in_option(stripped: str) -> bool:
    return stripped.startswith("set_option") and stripped.endswith(" in")


def _scoping(stripped: str, scopes: list[_Scope]) -> None:
    words = stripped.split()
    head = words[0]
    current = scopes[-1]
    if head == "namespace" and len(words) > 1:
        scopes.append(_Scope("namespace", tuple(words[1].split(".")), current.skip_kernel_tc))
    elif "section" in words[:3] and head in ("section", "noncomputable", "public", "private"):
        scopes.append(_Scope("section", (), current.skip_kernel_tc))
    elif stripped == "mutual":
        scopes.append(_Scope("mutual", (), current.skip_kernel_tc))
    elif head == "end" and len(scopes) > 1:
        scopes.pop()
    elif head == "set_option":
        option = _SKIP_TC.match(stripped)
        if option is not None and option.group(2) is None:
            current.skip_kernel_tc = option.group(1) == "true"


def _declaration(
    lines: list[str], number: int, match: re.Match[str], scopes: list[_Scope], pending: str
) -> Declaration | None:
    line = lines[number]
    kind = match.group("kw").split()[0]
    rest = line[match.end() :]
    if kind == "instance":
        priority = _PRIORITY.match(rest)
        if priority is not None:
            rest = rest[priority.end() :]
    name_match = _NAME.match(rest)
    if name_match is None or name_match.group(1).startswith(":="):
        return None
    name = name_match.group(1)
    if kind == "instance" and name.startswith(("where", "extends")):
        return None
    start = len(line) - len(rest) + name_match.start(1)
    signature = _signature(lines, number, len(match.group("indent")), start)
    modifiers = (pending + " " + match.group("mods")).strip()
    option = _SKIP_TC.search(pending)
    skip = scopes[-1].skip_kernel_tc
    if option is not None:
        skip = option.group(1) == "true"
    return Declaration(_full_name(scopes, name), kind, signature, number + 1, modifiers, skip)


def _full_name(scopes: list[_Scope], name: str) -> str:
    if name.startswith("_root_."):
        return name[len("_root_.") :]
    prefix = [part for scope in scopes for part in scope.names]
    return ".".join([*prefix, name]) if prefix else name


def _signature(lines: list[str], number: int, indent: int, start: int) -> str:
    parts = [lines[number][start:]]
    for following in lines[number + 1 : number + _MAX_LINES]:
        body = following.lstrip()
        if not body or (len(following) - len(body) <= indent and not body.startswith("|")):
            break
        parts.append(following)
        if _STOP.search(following) or body.startswith("|"):
            break
    text = "\n".join(parts)
    end = _stop_at_depth_zero(text)
    return " ".join(text[:end].split())[:_MAX_SIGNATURE]


def _stop_at_depth_zero(text: str) -> int:
    for found in _STOP.finditer(text):
        before = text[: found.start()]
        depth = sum(before.count(c) for c in _OPENERS) - sum(before.count(c) for c in _CLOSERS)
        if depth <= 0:
            return found.start()
    return len(text)
