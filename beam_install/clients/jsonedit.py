"""Editing one member of a JSON or JSONC document in place, every other byte kept.

The document is scanned once for the spans of its objects and members (comments and trailing
commas are accepted when the file allows them); an edit replaces, inserts or deletes exactly one
member's span. New text is indented like the file's own members. Callers parse the result again
to check it, so a bug here can never write a document that does not say what was planned.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Node:
    """A value's span; objects also carry their members (in order)."""

    start: int
    end: int
    members: list[Member] | None = None


@dataclass
class Member:
    key: str
    start: int  # the opening quote of the key
    value: Node
    comma: int | None = None  # position of the comma after the value, if any
    extra: dict[str, Any] = field(default_factory=dict)


_SPACE = re.compile(r"(?:[ \t\r\n\ufeff]+|//[^\n]*|/\*.*?\*/)*", re.S)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(r"[^,\]} \t\r\n/]+")


_DECODER = json.JSONDecoder()


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip_value(self) -> Node:
        """A value off the edited path: only its span matters, found at C speed when strict."""
        self.skip()
        start = self.pos
        try:
            _value, end = _DECODER.raw_decode(self.text, start)
        except ValueError:  # comments or trailing commas inside: the slow, tolerant way
            node = self.value(None)
            node.members = None
            return node
        self.pos = end
        return Node(start, end)

    def fail(self, what: str) -> ValueError:
        line = self.text.count("\n", 0, self.pos) + 1
        return ValueError(f"{what} at line {line}")

    def skip(self) -> None:
        match = _SPACE.match(self.text, self.pos)
        if match is not None:
            self.pos = match.end()
        if self.text.startswith("/*", self.pos):
            raise self.fail("unterminated comment")

    def string(self) -> str:
        match = _STRING.match(self.text, self.pos)
        if match is None:
            raise self.fail("unterminated string")
        self.pos = match.end()
        raw = match.group()
        return raw[1:-1] if "\\" not in raw else str(json.loads(raw))

    def value(self, path: list[str] | None = None) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end")
        ch = self.text[self.pos]
        if ch == "{":
            return self.obj(path)
        if ch == "[":
            return self.array()
        start = self.pos
        if ch == '"':
            self.string()
        else:
            match = _SCALAR.match(self.text, self.pos)
            if match is None:
                raise self.fail("unexpected character")
            self.pos = match.end()
        return Node(start, self.pos)

    def array(self) -> Node:
        start = self.pos
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                self.pos += 1
                return Node(start, self.pos)
            self.value(None)
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("]", self.pos):
                raise self.fail("expected , or ]")

    def obj(self, path: list[str] | None = None) -> Node:
        """An object; members of the objects along `path` get their own spans (None: all)."""
        node = Node(self.pos, -1, [])
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                self.pos += 1
                node.end = self.pos
                return node
            if not self.text.startswith('"', self.pos):
                raise self.fail("expected a key")
            key_start = self.pos
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected :")
            self.pos += 1
            if path is None:
                value = self.value(None)
            elif path and key == path[0]:
                value = self.value(path[1:])
            else:
                value = self.skip_value()
            member = Member(key, key_start, value)
            assert node.members is not None
            node.members.append(member)
            self.skip()
            if self.text.startswith(",", self.pos):
                member.comma = self.pos
                self.pos += 1
            elif not self.text.startswith("}", self.pos):
                raise self.fail("expected , or }")


def scan(text: str, path: list[str] | None = None) -> Node:
    """The spans of a document whose top level is an object; raises ValueError otherwise.

    With `path`, only the objects along it are taken apart; other values keep just their span.
    """
    scanner = _Scanner(text)
    scanner.skip()
    if not text.startswith("{", scanner.pos):
        raise scanner.fail("the document is not an object")
    root = scanner.obj(path)
    scanner.skip()
    if scanner.pos != len(text):
        raise scanner.fail("text after the top-level object")
    return root


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    head = text[line_start:pos]
    return head[: len(head) - len(head.lstrip(" \t"))]


def indent_unit(text: str) -> str:
    """The file's indentation step (two spaces when it shows none)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def _dump(value: Any, base: str, unit: str, multiline: bool) -> str:
    if not multiline:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + base)


def _find(node: Node, key: str) -> Member | None:
    return next((m for m in node.members or [] if m.key == key), None)


def _descend(text: str, root: Node, path: list[str]) -> tuple[Node, list[str]]:
    """The deepest object along `path`, and the keys still missing below it."""
    node = root
    for depth, key in enumerate(path):
        member = _find(node, key)
        if member is None:
            return node, path[depth:]
        if member.value.members is None:
            raise ValueError(f"`{'.'.join(path[: depth + 1])}` is not an object")
        node = member.value
    return node, []


def set_member(text: str, path: list[str], name: str, value: Any) -> str:
    """`text` with `path...name` set to `value` (objects on `path` created when missing)."""
    root = scan(text, path)
    node, missing = _descend(text, root, path)
    if missing:
        inner: Any = value
        for key in reversed([*missing[1:], name]):
            inner = {key: inner}
        return _insert(text, node, missing[0], inner)
    member = _find(node, name)
    if member is None:
        return _insert(text, node, name, value)
    unit = indent_unit(text)
    base = _line_indent(text, member.start)
    multiline = "\n" in text[node.start : node.end] or not text[node.start : node.end].strip("{}")
    body = _dump(value, base, unit, multiline)
    return text[: member.value.start] + body + text[member.value.end :]


def _insert(text: str, node: Node, key: str, value: Any) -> str:
    unit = indent_unit(text)
    members = node.members or []
    multiline = "\n" in text[node.start : node.end] or not members
    if members:
        base = _line_indent(text, members[0].start) if multiline else ""
        last = members[-1]
        entry = f"{json.dumps(key, ensure_ascii=False)}: {_dump(value, base, unit, multiline)}"
        sep = "\n" + base if multiline else " "
        if last.comma is not None:  # JSONC trailing comma: ours goes after it, with its own
            at = last.comma + 1
            return text[:at] + sep + entry + "," + text[at:]
        return text[: last.value.end] + "," + sep + entry + text[last.value.end :]
    if "\n" not in text.strip():  # a one-line file stays on one line
        entry = f"{json.dumps(key, ensure_ascii=False)}: {_dump(value, '', unit, False)}"
        inside = text[node.start + 1 : node.end - 1]
        return text[: node.start + 1] + inside.strip() + entry + text[node.end - 1 :]
    outer = _line_indent(text, node.start)
    base = outer + unit
    entry = f"{json.dumps(key, ensure_ascii=False)}: {_dump(value, base, unit, True)}"
    inside = text[node.start + 1 : node.end - 1]
    keep = inside.rstrip(" \t\r\n")  # comments inside an empty object stay in front of us
    return text[: node.start + 1] + keep + "\n" + base + entry + "\n" + outer + text[node.end - 1 :]


def delete_member(text: str, path: list[str], name: str) -> str:
    """`text` without `path...name`; unchanged when it is absent."""
    root = scan(text, path)
    node, missing = _descend(text, root, path)
    member = _find(node, name) if not missing else None
    if member is None:
        return text
    members = node.members or []
    index = members.index(member)
    if index == 0:
        if len(members) > 1:
            return text[: member.start] + text[members[1].start :]
        return text[: node.start + 1] + text[node.end - 1 :]
    prev = members[index - 1]
    last = index == len(members) - 1
    if last and member.comma is not None and prev.comma is not None:
        # a JSONC trailing comma stays where the file had one
        return text[: prev.comma + 1] + text[member.comma + 1 :]
    return text[: prev.value.end] + text[member.value.end :]


def get_path(doc: Any, path: list[str]) -> Any:
    """The value at `path` in parsed data, or None."""
    for key in path:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc
