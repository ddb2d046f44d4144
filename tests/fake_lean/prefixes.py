"""What Lean folds into the command that follows on the same line.

`open X Y in <command>` and `set_option name value in <command>` (any number of them, in any
order) scope their effect to that command, and a leading `@[...]` attribute list may hold nested
brackets (`@[simp, aesop safe (rule_sets := [Foo])]`). `split_prefixes` blanks all of that out
(same length, so positions stay right) and returns the names opened and the attribute text; a
lone `open X in` with nothing after it is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPEN_IN = re.compile(r"open\s+((?:[^\s]+\s+)+?)in\b\s*")
_OPTION_IN = re.compile(r"set_option\s+[\w.]+\s+\S+\s+in\b\s*")


@dataclass(frozen=True)
class Prefixed:
    code: str  # the same object as given when nothing had to be blanked
    opens: tuple[str, ...] = ()
    attributes: str = ""


def split_prefixes(code: str) -> Prefixed:
    index = len(code) - len(code.lstrip())
    opens: list[str] = []
    attributes: list[str] = []
    while True:
        opened = _OPEN_IN.match(code, index)
        option = _OPTION_IN.match(code, index)
        if opened is not None:
            opens.extend(opened.group(1).split())
            index = opened.end()
        elif option is not None:
            index = option.end()
        elif code.startswith("@[", index):
            end = _closing(code, index + 1)
            if end < 0:
                break
            attributes.append(code[index + 2 : end])
            index = end + 1
            index += len(code[index:]) - len(code[index:].lstrip())
        else:
            break
    if index == len(code) - len(code.lstrip()) or not code[index:].strip():
        return Prefixed(code)
    if not opens and not _OPTION_IN.search(code[:index]) and "[" not in "".join(attributes):
        return Prefixed(code, (), ", ".join(attributes))  # plain `@[attr]`: DECL_RE reads it
    blanked = "".join(c if c == "\n" else " " for c in code[:index]) + code[index:]
    return Prefixed(blanked, tuple(opens), ", ".join(attributes))


def _closing(code: str, start: int) -> int:
    """The index of the `]` matching the `[` at ``start`` (-1 when unbalanced)."""
    depth = 0
    for index in range(start, len(code)):
        if code[index] in "[(":
            depth += 1
        elif code[index] in "])":
            depth -= 1
            if depth == 0:
                return index
    return -1
