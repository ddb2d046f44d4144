"""What ``lean_verify`` asks Lean about declarations, and the flags it derives from the answers.

After the build, a scratch document ``import <Module>`` followed by one ``#print axioms <name>``
per line asks the built module (not the editor's copy) what each declaration depends on. Lean
answers each line with ``'<name>' depends on axioms: [a, b]`` or ``'<name>' does not depend on
any axioms``; an unknown name is an error. Flags: ``sorryAx``; ``axiom:<name>`` for an axiom
other than ``propext``, ``Classical.choice`` and ``Quot.sound``; ``unsafe``, ``implemented_by``,
``extern`` and ``skipKernelTC`` from the source; ``notFound``, ``noAnswer`` and ``notBuilt``
when nothing could be checked.
"""

from __future__ import annotations

import re
from typing import Any

from beam_runtime.broker.session import diagnostics as diag
from beam_runtime.search.scan import Declaration

STANDARD = frozenset({"propext", "Classical.choice", "Quot.sound"})
DEFAULT_KINDS = frozenset({"theorem", "lemma", "def", "instance"})
_DEPENDS = re.compile(r"depends on axioms:\s*\[(.*)\]", re.DOTALL)
_NONE = re.compile(r"does not depend on any axioms")
_MARKERS = (
    (re.compile(r"(?<![\w.])unsafe(?![\w'])"), "unsafe"),
    (re.compile(r"@\[[^\]]*\bimplemented_by\b"), "implemented_by"),
    (re.compile(r"@\[[^\]]*\bextern\b"), "extern"),
)


def default_names(found: list[Declaration]) -> list[str]:
    """Every theorem, lemma, def and named instance, except ``private`` ones (their names are
    not reachable from another file, so ``#print axioms`` cannot name them)."""
    return [
        d.name
        for d in found
        if d.kind in DEFAULT_KINDS and not re.search(r"(?<![\w.])private\b", d.modifiers)
    ]


def lookup(name: str, found: list[Declaration]) -> Declaration | None:
    exact = [d for d in found if d.name == name]
    if exact:
        return exact[0]
    suffix = [d for d in found if d.name.endswith("." + name)]
    return suffix[0] if len(suffix) == 1 else None


def scratch_text(module: str, names: list[str]) -> str:
    return f"import {module}\n" + "".join(f"#print axioms {name}\n" for name in names)


def answers(diagnostics: list[diag.Diagnostic], count: int) -> list[tuple[list[str] | None, str]]:
    """Per ``#print`` line: (axioms, problem); axioms ``None`` when Lean gave no usable answer."""
    by_line: dict[int, list[diag.Diagnostic]] = {}
    for item in diagnostics:
        line = item.get("range", {}).get("start", {}).get("line")
        if isinstance(line, int):
            by_line.setdefault(line, []).append(item)
    found: list[tuple[list[str] | None, str]] = []
    for index in range(count):
        found.append(_answer(by_line.get(index + 1, [])))
    return found


def _answer(items: list[diag.Diagnostic]) -> tuple[list[str] | None, str]:
    for item in items:
        message = diag.message_of(item)
        depends = _DEPENDS.search(message)
        if depends is not None:
            return [a for a in re.split(r"[\s,]+", depends.group(1)) if a], ""
        if _NONE.search(message):
            return [], ""
    for item in items:
        if diag.is_error(item):
            return None, "notFound"
    return None, "noAnswer"


def flags(axioms: list[str] | None, decl: Declaration | None, problem: str) -> list[str]:
    found: list[str] = [problem] if problem else []
    for axiom in axioms or []:
        if axiom == "sorryAx":
            found.append("sorryAx")
        elif axiom not in STANDARD:
            found.append(f"axiom:{axiom}")
    if decl is not None:
        for pattern, flag in _MARKERS:
            if pattern.search(decl.modifiers):
                found.append(flag)
        if decl.skip_kernel_tc:
            found.append("skipKernelTC")
    return found


def entry(name: str, axioms: list[str] | None, flagged: list[str]) -> dict[str, Any]:
    return {"name": name, "axioms": axioms, "flags": flagged}
