"""Axioms asked where a declaration lives, and the ``sorry`` warnings of a verified module.

From Lean 4.30 on, ``Lean.collectAxioms`` (which ``#print axioms`` calls) can report too few
axioms when asked from a file that imports the declaration and the only path to an axiom runs
through an imported inductive type (leanprover/lean4#15226); the listing in ``listing.py`` asks
from exactly such a file. So each verified module is also asked in a scratch copy of its own
text with one ``#print axioms <name>`` per line appended, where nothing is imported that the
module defines, and the answer kept is the union of the two. Lean answers each line with
``'<name>' depends on axioms: [a, b]`` or ``'<name>' does not depend on any axioms``.

The copy's diagnostics are Lean's own report on the module: every "declaration uses sorry"
warning in it counts, whether or not a named declaration carries the ``sorry`` (an ``example``
does not add a constant).
"""

from __future__ import annotations

import re

from beam_runtime.broker.session import diagnostics as diag

_DEPENDS = re.compile(r"depends on axioms:\s*\[(.*)\]", re.DOTALL)
_NONE = re.compile(r"does not depend on any axioms")
_SORRY = re.compile(r"declaration uses ['`]sorry['`]")


def copy_text(source: str, names: list[str]) -> tuple[str, int]:
    """The module's text with the ``#print axioms`` lines appended, and the 0-based line of the
    first of them."""
    body = source.replace("\r\n", "\n")
    if not body.endswith("\n"):
        body += "\n"
    first = body.count("\n") + 1
    return body + "\n" + "".join(f"#print axioms {name}\n" for name in names), first


def answers(diagnostics: list[diag.Diagnostic], first: int, count: int) -> list[list[str] | None]:
    """Per ``#print`` line: its axioms, or None when Lean gave no usable answer."""
    by_line: dict[int, list[diag.Diagnostic]] = {}
    for item in diagnostics:
        line = item.get("range", {}).get("start", {}).get("line")
        if isinstance(line, int):
            by_line.setdefault(line, []).append(item)
    return [_answer(by_line.get(first + index, [])) for index in range(count)]


def _answer(items: list[diag.Diagnostic]) -> list[str] | None:
    for item in items:
        message = diag.message_of(item)
        depends = _DEPENDS.search(message)
        if depends is not None:
            return [a for a in re.split(r"[\s,]+", depends.group(1)) if a]
        if _NONE.search(message):
            return []
    return None


def sorry_lines(diagnostics: list[diag.Diagnostic], before: int) -> list[int]:
    """1-based lines of the sorry warnings Lean reported on the module's own text."""
    found = set()
    for item in diagnostics:
        line = item.get("range", {}).get("start", {}).get("line")
        if isinstance(line, int) and line < before and _SORRY.search(diag.message_of(item)):
            found.add(line + 1)
    return sorted(found)


def is_sorry_warning(message: str) -> bool:
    return _SORRY.search(message) is not None
