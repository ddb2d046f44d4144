"""``$/lean/plainGoal`` answers parsed into structured goals, and the ``after`` position.

A goal string from Lean looks like::

    case right
    p q : Prop
    hp : p
    x : Nat := 5
    ⊢ q

An optional ``case`` line, hypotheses (adjacent names sharing a type are grouped, a ``:=`` value
may follow the type, long types continue on deeper-indented lines), then the target after ``⊢``.
"""

from __future__ import annotations

from typing import Any

from beam_runtime.broker.text import DocumentText, utf16_len, utf16_to_index

TURNSTILE = "⊢"


def parse_goal(text: str) -> dict[str, Any]:
    lines = text.split("\n")
    goal: dict[str, Any] = {}
    if lines and lines[0].startswith("case "):
        goal["userName"] = lines[0][len("case ") :].strip()
        lines = lines[1:]
    entries = _group_continuations(lines)
    hyps: list[dict[str, Any]] = []
    target = ""
    for entry in entries:
        if entry.startswith(TURNSTILE):
            target = entry[len(TURNSTILE) :].strip()
        elif target:
            target = f"{target}\n{entry}"
        else:
            hyps.append(_parse_hypothesis(entry))
    goal["hyps"] = hyps
    goal["target"] = target
    return goal


def parse_plain_goal(answer: dict[str, Any]) -> list[dict[str, Any]]:
    goals = answer.get("goals")
    if not isinstance(goals, list):
        return []
    return [parse_goal(item) for item in goals if isinstance(item, str)]


def _group_continuations(lines: list[str]) -> list[str]:
    """Join each line that starts with whitespace onto the entry before it."""
    entries: list[str] = []
    for line in lines:
        if entries and line[:1] in (" ", "\t"):
            entries[-1] = f"{entries[-1]}\n{line}"
        elif line.strip():
            entries.append(line)
    return entries


def _parse_hypothesis(entry: str) -> dict[str, Any]:
    names_part, sep, rest = entry.partition(" : ")
    if not sep:
        return {"names": [], "type": entry.strip()}
    hyp: dict[str, Any] = {"names": names_part.split()}
    type_part, assign, value = rest.partition(" := ")
    hyp["type"] = type_part.strip()
    if assign:
        hyp["value"] = value.strip()
    return hyp


def after_position(doc: DocumentText, line: int, character: int) -> dict[str, int]:
    """End of the tactic that starts at (line, character) (decision 34).

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
