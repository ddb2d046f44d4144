"""The cheat policy of ``lean_verify``: ``<root>/.lean-beam/verify.toml`` and the rules it switches.

The file is optional and every key in it too; the defaults are the strictest setting::

    allowed_axioms = ["propext", "Classical.choice", "Quot.sound"]
    forbid_sorry = true            # sorryAx, Lean's "declaration uses sorry" warnings, `admit`
    forbid_native = true           # Lean.ofReduceBool/ofReduceNat/trustCompiler, `._native.` axioms
    forbid_implemented_by = true   # unsafe, implemented_by, extern reached in the workspace
    forbid_debug_options = true    # `set_option debug.* ...` in the sources and the lakefile
    forbid_search_tactics = true   # exact? apply? simp? simp_all? rw? aesop? decide? hint

An axiom passes when it is in ``allowed_axioms``, or is ``sorryAx`` with ``forbid_sorry`` off, or
is a native-computation axiom with ``forbid_native`` off; any other axiom (a user ``axiom``
included) is a flag. An unknown key or a value of the wrong type is an error, so that a typo
never turns a rule off silently.

The source rules read the text (comments and strings blanked): a search tactic or ``admit`` in
tactic position, and a ``set_option debug.<name>`` whose value is not ``false``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from beam_runtime import safe_read
from beam_runtime.broker.errors import BrokerError

POLICY_FILE = ".lean-beam/verify.toml"
STANDARD_AXIOMS = ("propext", "Classical.choice", "Quot.sound")
NATIVE_AXIOMS = frozenset({"Lean.ofReduceBool", "Lean.ofReduceNat", "Lean.trustCompiler"})
RULES = (
    "forbid_sorry",
    "forbid_native",
    "forbid_implemented_by",
    "forbid_debug_options",
    "forbid_search_tactics",
)
_SEARCH = re.compile(
    r"(?<![\w.'?!])(exact\?|apply\?|simp_all\?!?|simp\?!?|rw\?|aesop\?|decide\?)(?![\w'?!])"
)
_PLAIN = re.compile(r"(?:^|\bby\b|;|<;>|[(·|]|=>)\s*(hint|admit)\s*(?=$|;|<;>|\)|\|)")
_DEBUG = re.compile(r"\bset_option\s+(debug\.[\w.]+)\s+(\S+)")
_LAKE_DEBUG = re.compile(r"(?:(?<![\w])|(?<=-D))`?(debug\.[A-Za-z][\w.]*)")


@dataclass(frozen=True)
class Policy:
    allowed_axioms: tuple[str, ...] = STANDARD_AXIOMS
    forbid_sorry: bool = True
    forbid_native: bool = True
    forbid_implemented_by: bool = True
    forbid_debug_options: bool = True
    forbid_search_tactics: bool = True

    def echo(self) -> dict[str, Any]:
        return {"allowed_axioms": list(self.allowed_axioms), **{r: getattr(self, r) for r in RULES}}

    def axiom_flag(self, axiom: str) -> str | None:
        """The flag an axiom earns under this policy, or None when it is allowed."""
        if axiom in self.allowed_axioms:
            return None
        if axiom == "sorryAx":
            return "sorryAx" if self.forbid_sorry else None
        if is_native(axiom):
            return f"native:{axiom}" if self.forbid_native else None
        return f"axiom:{axiom}"

    def mark_flag(self, mark: str) -> str | None:
        """``unsafe:``/``implemented_by:``/``extern:`` marks are flags unless allowed."""
        return mark if self.forbid_implemented_by else None


def is_native(axiom: str) -> bool:
    return axiom in NATIVE_AXIOMS or "._native." in f".{axiom}"


def load(root: str) -> Policy:
    """The effective policy of the workspace (defaults without a file)."""
    path = os.path.join(root, POLICY_FILE)
    try:
        data = safe_read.read_regular(path, safe_read.SMALL_CAP)
    except FileNotFoundError:
        return Policy()
    except OSError as exc:
        raise _bad(path, f"it cannot be read: {exc.strerror or exc}") from exc
    try:
        table = _toml_loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _bad(path, f"it is not valid TOML: {exc}") from exc
    return _policy(path, table)


def _toml_loads(text: str) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads(text)


def _policy(path: str, table: dict[str, Any]) -> Policy:
    unknown = sorted(set(table) - {"allowed_axioms", *RULES})
    if unknown:
        raise _bad(path, f"unknown key(s) {', '.join(unknown)}")
    values: dict[str, Any] = {}
    if "allowed_axioms" in table:
        axioms = table["allowed_axioms"]
        if not isinstance(axioms, list) or not all(isinstance(a, str) for a in axioms):
            raise _bad(path, "allowed_axioms must be a list of axiom names")
        values["allowed_axioms"] = tuple(dict.fromkeys(axioms))
    for rule in RULES:
        if rule in table:
            if not isinstance(table[rule], bool):
                raise _bad(path, f"{rule} must be true or false")
            values[rule] = table[rule]
    return Policy(**values)


def _bad(path: str, problem: str) -> BrokerError:
    return BrokerError(
        "invalidParams",
        f"{path} cannot be used as the verification policy: {problem}",
        {
            "reason": "badPolicy",
            "path": path,
            "fix": "fix the file (keys: allowed_axioms and the forbid_* booleans, see "
            "docs/MCP.md) or remove it to use the strict defaults",
        },
    )


# ------------------------------------------------------------------ source rules


@dataclass(frozen=True)
class Site:
    line: int  # 1-based
    flag: str  # "tactic:exact?", "option:debug.skipKernelTC", ...


def source_sites(text: str, policy: Policy, *, tactics: bool) -> list[Site]:
    """What the source rules find in one module's text (``tactics``: search tactics and
    ``admit`` too, for the verified files; debug options always)."""
    found: list[Site] = []
    for number, line in enumerate(code_lines(text), start=1):
        if policy.forbid_debug_options:
            for match in _DEBUG.finditer(line):
                if match.group(2) != "false":
                    found.append(Site(number, f"option:{match.group(1)}"))
        if not tactics:
            continue
        if policy.forbid_search_tactics:
            found += [Site(number, f"tactic:{m.group(1)}") for m in _SEARCH.finditer(line)]
        for match in _PLAIN.finditer(line):
            word = match.group(1)
            if (word == "hint" and policy.forbid_search_tactics) or (
                word == "admit" and policy.forbid_sorry
            ):
                found.append(Site(number, f"tactic:{word}"))
    return found


def lakefile_sites(name: str, text: str, policy: Policy) -> list[Site]:
    """``debug.*`` options set for every module by the lakefile (``leanOptions``, arguments)."""
    if not policy.forbid_debug_options:
        return []
    comment = r"--.*$" if name.endswith(".lean") else r"#.*$"  # strings kept: `-Ddebug.x=...`
    lines = [re.sub(comment, "", line) for line in text.split("\n")]
    return [
        Site(number, f"option:{match.group(1)}")
        for number, line in enumerate(lines, start=1)
        for match in _LAKE_DEBUG.finditer(line)
    ]


def code_lines(text: str) -> list[str]:
    """The lines of a Lean source with comments (nested ``/- -/`` too) and the insides of
    string literals blanked, so that what is left is code; line numbers are kept."""
    out: list[str] = []
    depth = 0
    for line in text.replace("\r\n", "\n").split("\n"):
        kept: list[str] = []
        index = 0
        in_string = False
        while index < len(line):
            pair = line[index : index + 2]
            if depth:
                depth += 1 if pair == "/-" else -1 if pair == "-/" else 0
                index += 2 if pair in ("/-", "-/") else 1
                continue
            if in_string:
                if line[index] == "\\":
                    index += 2
                    continue
                in_string = line[index] != '"'
                kept.append('"' if not in_string else " ")
                index += 1
                continue
            if pair == "--":
                break
            if pair == "/-":
                depth = 1
                index += 2
                continue
            in_string = line[index] == '"'
            kept.append(line[index])
            index += 1
        out.append("".join(kept))
    return out
