"""Goal layout as Lean prints it (``InteractiveGoalCore.pretty``), and the RPC form of a goal.

Width 120, nesting 2:

* ``names : type`` when it fits on one line, else ``names :`` and the type on the next lines,
  nested by 2; an anonymous hypothesis has no names (``: type``);
* a let-bound hypothesis is ``names : type := value``, or ``names : type :=`` with the value
  nested by 2 on the next lines (the type is not nested there);
* the target after ``⊢ `` (``| `` in conv mode), later lines nested by 2;
* adjacent hypotheses with the same type and no value share one entry.

A type too long for its line is broken at spaces; its own continuation lines are indented by 2.
The same broken text is what ``getInteractiveGoals`` answers, flattened, so both sources agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

WIDTH = 120
NEST = "  "


@dataclass(frozen=True)
class Entry:
    """One hypothesis line group: names (empty: anonymous), type and optional value."""

    names: tuple[str, ...]
    type: str
    value: str | None = None


def break_text(text: str, width: int) -> str:
    """``text`` broken at spaces so each line fits ``width``; continuation lines indented 2."""
    if "\n" in text or len(text) <= width:
        return text
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        limit = width if not lines else width - len(NEST)
        if current and len(current) + 1 + len(word) > limit:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    lines.append(current)
    return "\n".join([lines[0], *(NEST + line for line in lines[1:])])


def nest(text: str) -> str:
    """Every line after the first indented by one level."""
    first, *rest = text.split("\n")
    return "\n".join([first, *(NEST + line for line in rest)])


def entry_text(entry: Entry) -> str:
    names = " ".join(entry.names)
    head = f"{names} :" if names else ":"
    if entry.value is not None:
        start = f"{names} : {entry.type} :="
        last = start.split("\n")[-1]
        value = break_text(entry.value, WIDTH - len(NEST))
        if "\n" in value or len(last) + 1 + len(value) > WIDTH:
            return f"{start}\n{NEST}{nest(value)}"
        return f"{start} {value}"
    flat = f"{head} {entry.type}"
    if "\n" in entry.type or len(flat) > WIDTH:
        return f"{head}\n{NEST}{nest(break_text(entry.type, WIDTH - len(NEST)))}"
    return flat


def target_text(target: str, conv: bool) -> str:
    prefix = "| " if conv else "⊢ "
    return prefix + nest(break_text(target, WIDTH - len(prefix)))


def grouped(hyps: Iterable[tuple[str, str, str | None]]) -> list[Entry]:
    """(name, type, value) triples with adjacent same-type, value-less names grouped."""
    entries: list[Entry] = []
    for name, type_, value in hyps:
        names = (name,) if name else ()
        last = entries[-1] if entries else None
        if _joins(last, names, type_, value) and last is not None:
            entries[-1] = Entry((*last.names, *names), type_)
        else:
            entries.append(Entry(names, type_, value))
    return entries


_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def inaccessible(names: list[str]) -> list[str]:
    """Shadowed inaccessible names as Lean shows them: the newest ``x✝``, older ``x✝¹``, ..."""
    out = []
    for index, name in enumerate(names):
        later = sum(1 for other in names[index + 1 :] if other == name)
        out.append(
            name + str(later).translate(_SUPERSCRIPTS) if name.endswith("✝") and later else name
        )
    return out


def _joins(last: Entry | None, names: tuple[str, ...], type_: str, value: str | None) -> bool:
    if last is None or not last.names or not names:
        return False
    return value is None and last.value is None and last.type == type_


def goal_text(case: str | None, entries: list[Entry], target: str, conv: bool) -> str:
    lines = [f"case {case}"] if case else []
    lines.extend(entry_text(entry) for entry in entries)
    lines.append(target_text(target, conv))
    return "\n".join(lines)


# -- the RPC form ---------------------------------------------------------------------------


class Refs:
    """RPC references handed out in one answer: ``{"p": id}`` in wire format v0,
    ``{"__rpcref": id}`` in v1 (``key``)."""

    def __init__(self, start: int, key: str = "p") -> None:
        self.next = start
        self.key = key
        self.issued: list[str] = []

    def new(self) -> dict[str, str]:
        self.next += 1
        ref = str(self.next)
        self.issued.append(ref)
        return {self.key: ref}


def tagged(text: str, refs: Refs) -> dict[str, Any]:
    """``TaggedText`` whose words are tagged subexpressions, as Lean's are."""
    pieces: list[dict[str, Any]] = []
    word = ""
    for char in text:
        if char.isalnum() or char in "_'✝.":
            word += char
            continue
        if word:
            pieces.append(_tag(word, refs, len(pieces)))
            word = ""
        pieces.append({"text": char})
    if word:
        pieces.append(_tag(word, refs, len(pieces)))
    return {"append": pieces} if len(pieces) != 1 else pieces[0]


def _tag(word: str, refs: Refs, index: int) -> dict[str, Any]:
    info = {"info": refs.new(), "subexprPos": f"/{index}"}
    return {"tag": [info, {"text": word}]}


def interactive_goal(
    case: str | None, entries: list[Entry], target: str, conv: bool, refs: Refs, mvar: int
) -> dict[str, Any]:
    hyps = []
    for number, entry in enumerate(entries):
        hyp: dict[str, Any] = {
            "names": list(entry.names) or ["[anonymous]"],
            "fvarIds": [f"_uniq.{mvar}{number}{k}" for k in range(len(entry.names) or 1)],
            "type": tagged(break_text(entry.type, WIDTH - len(NEST)), refs),
            "isInstance": False,
            "isType": entry.type in ("Prop", "Type") or entry.type.startswith(("Sort", "Type")),
        }
        if entry.value is not None:
            hyp["val"] = tagged(break_text(entry.value, WIDTH - len(NEST)), refs)
        hyps.append(hyp)
    prefix = "| " if conv else "⊢ "
    goal: dict[str, Any] = {
        "hyps": hyps,
        "type": tagged(break_text(target, WIDTH - len(prefix)), refs),
        "ctx": refs.new(),
        "goalPrefix": prefix,
        "mvarId": f"_uniq.{mvar}",
    }
    if case:
        goal["userName"] = case
    return goal
