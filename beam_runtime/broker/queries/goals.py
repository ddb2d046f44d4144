"""Goal texts from ``$/lean/plainGoal`` parsed into structured goals, and the ``after`` position.

Lean lays a goal out with its pretty printer at width 120 (``InteractiveGoalCore.pretty``):

* an optional ``case <tag>`` line;
* one entry per hypothesis group, each starting in column 0:
  ``names : type`` or, when it does not fit, ``names :`` with the type on the next lines nested
  by 2; a let-bound one as ``names : type :=`` with the value nested by 2 (the type itself is not
  nested there, so its own line breaks continue in column 0); an anonymous one as ``: type``;
* the target after the prefix ``⊢ `` (``| `` for a conv goal), its later lines nested by 2.

So lines are first grouped into entries (a new entry starts only at a column-0 line that looks
like the start of one), then each entry is split into names, type and value. The ``:=`` between
type and value is the first one outside brackets that no ``let``/``have`` in the type claims.
``type``, ``value`` and ``target`` are returned with the nesting removed.
"""

from __future__ import annotations

import re
from typing import Any

from beam_runtime.broker.session.text import DocumentText, utf16_len, utf16_to_index

GOAL_PREFIXES = (("⊢", "goal"), ("|", "conv"))
_NAME = r"(?:«[^»]*»|[^\s:()\[\]{},⊢|=]+)"
_HYP_START = re.compile(rf"^({_NAME}(?: {_NAME})*) :(?= |$)")
_TOKEN = re.compile(r"«[^»]*»|[()\[\]{}⟨⟩⦃⦄]|[^\s()\[\]{}⟨⟩⦃⦄]+")
_OPENERS, _CLOSERS = "([{⟨⦃", ")]}⟩⦄"
_BINDING_KEYWORDS = frozenset(("let", "have", "letI", "haveI", "let_fun"))
_FENCE = re.compile(r"^```lean\n(.*)\n```$", re.DOTALL)


def parse_plain_goal(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """Structured goals of one ``$/lean/plainGoal`` answer (``goals: []`` means none left)."""
    goals = answer.get("goals")
    if not isinstance(goals, list):
        goals = _goals_from_rendered(answer.get("rendered"))
    return [parse_goal(item) for item in goals if isinstance(item, str) and item.strip()]


def _goals_from_rendered(rendered: Any) -> list[str]:
    """Older answers may only carry the markdown: fenced goals joined by ``---`` lines."""
    if not isinstance(rendered, str) or rendered.strip() == "no goals":
        return []
    out = []
    for block in rendered.split("\n---\n"):
        match = _FENCE.match(block.strip())
        out.append(match.group(1) if match else block)
    return out


def parse_goal(text: str) -> dict[str, Any]:
    lines = [line.rstrip("\r") for line in text.split("\n")]
    goal: dict[str, Any] = {}
    if lines and lines[0].startswith("case "):
        goal["userName"] = lines[0][len("case ") :].strip()
        lines = lines[1:]
    kind, target = "goal", ""
    hyps: list[dict[str, Any]] = []
    for entry in _entries(lines):
        prefix = _goal_prefix(entry[0])
        if prefix is None:
            hyps.append(_hypothesis(entry))
            continue
        symbol, kind = prefix
        target = _nested(entry[0][len(symbol) :], entry[1:])
    goal["kind"] = kind
    goal["hyps"] = hyps
    goal["target"] = target
    return goal


def _goal_prefix(line: str) -> tuple[str, str] | None:
    for symbol, kind in GOAL_PREFIXES:
        if line == symbol or line.startswith(symbol + " "):
            return symbol, kind
    return None


def _starts_entry(line: str) -> bool:
    if not line or line[0] in " \t":
        return False
    return (
        _goal_prefix(line) is not None
        or line == ":"
        or line.startswith(": ")
        or _HYP_START.match(line) is not None
    )


def _entries(lines: list[str]) -> list[list[str]]:
    """Lines grouped into hypothesis and target entries; the target swallows what follows."""
    entries: list[list[str]] = []
    in_target = False
    for line in lines:
        if not line.strip():
            continue
        if entries and (in_target or not _starts_entry(line)):
            entries[-1].append(line)
            continue
        entries.append([line])
        in_target = _goal_prefix(line) is not None
    return entries


def _hypothesis(entry: list[str]) -> dict[str, Any]:
    head, rest = entry[0], entry[1:]
    match = _HYP_START.match(head)
    if head.startswith(":"):
        names: list[str] = []
        inline = head[1:]
    elif match is not None:
        names = match.group(1).split(" ")
        inline = head[match.end() :]
    else:  # not Lean's layout: keep the text rather than guess at names
        return {"names": [], "type": "\n".join(line.strip() for line in entry)}
    hyp: dict[str, Any] = {"names": names}
    split = _value_split([inline, *rest])
    if split is None:
        hyp["type"] = _nested(inline, rest)
        return hyp
    line_no, column = split
    body = [inline, *rest]
    type_lines = [*body[:line_no], body[line_no][:column]]
    hyp["type"] = "\n".join([type_lines[0].strip(), *type_lines[1:]]).strip()
    hyp["value"] = _nested(body[line_no][column + 2 :], body[line_no + 1 :])
    return hyp


def _value_split(body: list[str]) -> tuple[int, int] | None:
    """(line, column) of the ``:=`` that separates a let-bound hypothesis' type from its value."""
    depth = pending = 0
    for line_no, line in enumerate(body):
        for token in _TOKEN.finditer(line):
            word = token.group(0)
            if word in _OPENERS:
                depth += 1
            elif word in _CLOSERS:
                depth = max(0, depth - 1)
            elif depth == 0 and word in _BINDING_KEYWORDS:
                pending += 1
            elif depth == 0 and word == ":=":
                if not pending:
                    return line_no, token.start()
                pending -= 1
    return None


def _nested(inline: str, rest: list[str]) -> str:
    """An item's text: what follows its ``:``/``:=``/prefix, with one nesting level removed."""
    parts = [inline.strip()] if inline.strip() else []
    parts.extend(_unnest(line) for line in rest)
    return "\n".join(parts).rstrip()


def _unnest(line: str) -> str:
    if line.startswith("\t"):
        return line[1:].rstrip()
    return (line[2:] if line.startswith("  ") else line.lstrip(" ")).rstrip()


def after_position(doc: DocumentText, line: int, character: int) -> dict[str, int]:
    """End of the tactic that starts at (line, character).

    The tactic runs to the end of its line plus every following line indented deeper than it,
    without trailing whitespace and comments. A tactic that does not start its line (``by simp``)
    takes the line's indentation as its own.
    """
    lines = doc.lines
    first = lines[line]
    indent = len(first) - len(first.lstrip())
    column = min(character, indent)
    last = line
    for index in range(line + 1, len(lines)):
        candidate = lines[index]
        if not candidate.strip():
            continue
        if len(candidate) - len(candidate.lstrip()) <= column:
            break
        last = index
    for index in range(last, line - 1, -1):
        start = (utf16_to_index(first, character) or 0) if index == line else 0
        body = _strip_comments(lines[index][start:])
        if body.strip():
            kept = lines[index][:start] + body.rstrip()
            return {"line": index, "character": utf16_len(kept)}
    return {"line": line, "character": character}


def _strip_comments(segment: str) -> str:
    """Drop a trailing ``--`` comment and trailing block comments from one line."""
    cut = segment.find("--")
    if cut >= 0:
        segment = segment[:cut]
    segment = segment.rstrip()
    while segment.endswith("-/"):
        opening = segment.rfind("/-")
        if opening < 0:
            break
        segment = segment[:opening].rstrip()
    return segment
