"""From Lean's answers about the verified modules to ``declarations``, flags and statements.

Pure functions over what ``verify.py`` gathered: each module's constant listing (``listing``),
the axioms its own copy reported (``axioms``), the sorry warnings Lean reported on it, the
source-rule sites (``policy``) and the lock (``lock``). Rules:

- A declaration's ``axioms`` are the union of the listing's and the copy's answers; each axiom
  the policy does not allow is a flag (``sorryAx``, ``axiom:<name>``, ``native:<name>``), and so
  is each ``unsafe:``/``implemented_by:``/``extern:`` mark unless the policy allows them.
- Every constant written in the source is listed; a constant Lean generated (no declaration
  range) is listed only when it carries a flag its parent declaration does not.
- A source site (``tactic:``, ``option:``) is put on the declaration whose range holds its line,
  else on the first declaration after it (``set_option ... in`` stands before it), else it is an
  entry of its own named ``<path>:<line>``. So is a sorry warning no flagged declaration
  explains.
- The copy not answering for a declaration is ``noAnswer``; a named declaration Lean does not
  know is ``notFound``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from beam_runtime.broker.verify import lock as lk
from beam_runtime.broker.verify.listing import Constant, Listing
from beam_runtime.broker.verify.policy import Policy, Site


@dataclass
class ModuleAnswers:
    """What Lean said about one verified module."""

    module: str
    path: str  # root-relative, as results show it
    text: str  # the module's source as hashed before the build
    listing: Listing | None = None  # None: not asked (not built) or no time left
    copy: dict[str, list[str] | None] = field(default_factory=dict)  # name -> axioms
    sorry_lines: list[int] = field(default_factory=list)  # 1-based
    sites: list[Site] = field(default_factory=list)
    built: bool = False

    @property
    def answered(self) -> bool:
        return self.listing is not None and self.listing.complete and not self.listing.missing


def resolve(requested: list[str], answers: list[ModuleAnswers]) -> dict[str, list[str]]:
    """Which constants to check per module: all of them, or the named ones (full name, else a
    unique suffix among the written ones); unknown names go to the first module's list as they
    are and come out as ``notFound``."""
    chosen: dict[str, list[str]] = {a.module: [] for a in answers}
    for name in requested:
        home, full = _find(name, answers)
        target = home or answers[0].module
        if full not in chosen[target]:
            chosen[target].append(full)
    return chosen


def _find(name: str, answers: list[ModuleAnswers]) -> tuple[str | None, str]:
    for answer in answers:
        if answer.listing and any(c.name == name for c in answer.listing.constants):
            return answer.module, name
    suffix = [
        (answer.module, c.name)
        for answer in answers
        if answer.listing
        for c in answer.listing.constants
        if c.written and c.name.endswith("." + name)
    ]
    return suffix[0] if len(suffix) == 1 else (None, name)


def module_entries(
    answer: ModuleAnswers, names: list[str] | None, policy: Policy
) -> list[dict[str, Any]]:
    """The ``declarations`` entries of one answered module (``names``: the ones asked for)."""
    assert answer.listing is not None
    constants = {c.name: c for c in answer.listing.constants}
    wanted = list(constants) if names is None else names
    entries: dict[str, dict[str, Any]] = {}
    for name in wanted:
        constant = constants.get(name)
        if constant is None:
            entries[name] = entry(name, None, ["notFound"])
            continue
        entries[name] = _constant_entry(constant, answer.copy, policy)
    _place_sites(answer, constants, entries, policy)
    return [e for n, e in entries.items() if _shown(n, e, constants, entries)]


def _constant_entry(
    constant: Constant, copy: dict[str, list[str] | None], policy: Policy
) -> dict[str, Any]:
    flags: list[str] = []
    axioms = set(constant.axioms)
    if constant.written:
        own = copy.get(constant.name)
        if own is None:
            flags.append("noAnswer")
        else:
            axioms.update(own)
    ordered = sorted(axioms)
    for axiom in ordered:
        flag = policy.axiom_flag(axiom)
        if flag is not None:
            flags.append(flag)
    for mark in constant.marks:
        flag = policy.mark_flag(mark)
        if flag is not None and flag not in flags:
            flags.append(flag)
    return entry(constant.name, ordered, flags)


def _place_sites(
    answer: ModuleAnswers,
    constants: dict[str, Constant],
    entries: dict[str, dict[str, Any]],
    policy: Policy,
) -> None:
    written = [c for c in constants.values() if c.written]
    sites = list(answer.sites)
    if policy.forbid_sorry:
        sites += [Site(line, "sorryWarning") for line in answer.sorry_lines]
    for site in sites:
        holder = _holder(site.line, written, after=site.flag != "sorryWarning")
        if site.flag == "sorryWarning" and holder is not None:
            carried = entries.get(holder.name, {}).get("flags", [])
            if "sorryAx" in carried:
                continue  # Lean's warning for a declaration already flagged for its sorry
        if holder is not None and holder.name in entries:
            flags = entries[holder.name]["flags"]
        else:
            name = f"{answer.path}:{site.line}"
            flags = entries.setdefault(name, entry(name, None, []))["flags"]
        if site.flag not in flags:
            flags.append(site.flag)


def _holder(line: int, written: list[Constant], *, after: bool) -> Constant | None:
    inside = [c for c in written if c.line <= line <= c.end_line]
    if inside:
        return min(inside, key=lambda c: c.end_line - c.line)
    later = [c for c in written if c.line > line] if after else []
    return min(later, key=lambda c: c.line) if later else None


def _shown(
    name: str,
    item: dict[str, Any],
    constants: dict[str, Constant],
    entries: dict[str, dict[str, Any]],
) -> bool:
    constant = constants.get(name)
    if constant is None or constant.written:
        return True
    carried = {
        flag
        for other, c in constants.items()
        if c.written and name.startswith(other + ".") and other in entries
        for flag in entries[other]["flags"]
    }
    return any(flag not in carried for flag in item["flags"])


def checked_count(answer: ModuleAnswers, names: list[str] | None) -> int:
    """How many of the module's constants were checked (all, or the named ones it has)."""
    assert answer.listing is not None
    known = {c.name for c in answer.listing.constants}
    return len(known) if names is None else len(known.intersection(names))


def site_entries(path: str, sites: list[Site]) -> list[dict[str, Any]]:
    """Entries for source sites in a module whose declarations are not listed."""
    found: dict[str, dict[str, Any]] = {}
    for site in sites:
        name = f"{path}:{site.line}"
        flags = found.setdefault(name, entry(name, None, []))["flags"]
        if site.flag not in flags:
            flags.append(site.flag)
    return list(found.values())


def statements(answer: ModuleAnswers, locked: list[lk.Locked]) -> list[dict[str, str]]:
    """``[{name, status}]`` for the locked declarations of an answered module."""
    assert answer.listing is not None
    return [
        {"name": e.name, "status": lk.status(e, answer.listing.statements.get(e.name))}
        for e in locked
    ]


def entry(name: str, axioms: list[str] | None, flags: list[str]) -> dict[str, Any]:
    return {"name": name, "axioms": axioms, "flags": flags}
