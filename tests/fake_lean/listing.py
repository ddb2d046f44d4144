"""The constant listing `lean_verify` asks for, answered from the fake's imported declarations.

`lean_verify` sends one `#eval show Lean.CoreM Unit from do ...` program (see
`beam_runtime/broker/verify/listing.py`) that walks the constants an imported module added and
prints, through `IO.println`, one tab-separated line per constant:
`lean-beam-decl NAME KIND LINE END_LINE AXIOMS MARKS`, a `lean-beam-statement NAME TEXT` line for
each locked name, and `lean-beam-end COUNT` last (`lean-beam-missing MODULE` when the module is
not imported). Lean reports `#eval` output as one information message on the `#eval` keyword; so
does this. The fake recognises the program by the `lean-beam-decl` marker and reads the module,
the workspace modules and the locked names from the program's `let` lines.

Axioms are those an importing file sees (`Decl.imported_axioms`, with the gap for imported
inductive types). Marks: `unsafe:`, `implemented_by:` and `extern:` for every workspace
declaration reached through the names a declaration uses. The statement text stands in for
Lean's `pp.all` rendering of the type: the binders and the type as written, normalised.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from tests.fake_lean.model import INFORMATION, Decl, Diag
from tests.fake_lean.source import Pos

if TYPE_CHECKING:
    from tests.fake_lean.elab import CmdResult, Env

_TARGET = re.compile(r'let target := "([^"]*)"')
_LIST = r"let {name} : Array String := #\[([^\]]*)\]"
_KINDS = {
    "theorem": "theorem",
    "lemma": "theorem",
    "def": "def",
    "abbrev": "def",
    "instance": "def",
    "opaque": "opaque",
    "axiom": "axiom",
    "structure": "inductive",
    "inductive": "inductive",
    "class": "inductive",
}


def is_listing(text: str) -> bool:
    return text.lstrip().startswith("#eval") and "lean-beam-decl" in text


def answer_listing(result: CmdResult, text: str, start: Pos, end: Pos, env: Env, uri: str) -> None:
    """Append the program's output (one information diagnostic) to ``result.diags``."""
    target = _TARGET.search(text)
    workspace = _strings(text, "workspace")
    locked = set(_strings(text, "locked"))
    decls = env.decls
    module = target.group(1) if target else ""
    lines: list[str] = []
    own = [d for d in decls.values() if _module(d.uri) == module]
    if not own and not _module_file(module).is_file():
        lines.append(f"lean-beam-missing\t{module}")
    else:
        for decl in own:
            axioms = ",".join(decl.imported_axioms)
            marks = ",".join(_marks(decl, decls, set(workspace)))
            kind = _KINDS.get(decl.keyword, "def")
            span = f"{decl.start.line + 1}\t{decl.end.line + 1}"
            lines.append(f"lean-beam-decl\t{decl.name}\t{kind}\t{span}\t{axioms}\t{marks}")
            if decl.name in locked:
                statement = f"{decl.binders} : {decl.type}".strip()
                lines.append(f"lean-beam-statement\t{decl.name}\t{statement}")
        lines.append(f"lean-beam-end\t{len(own)}")
    result.diags.append(Diag(start, end, INFORMATION, "\n".join(lines) + "\n"))


def _strings(text: str, name: str) -> list[str]:
    found = re.search(_LIST.format(name=name), text)
    return re.findall(r'"([^"]*)"', found.group(1)) if found else []


def _module(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    try:
        relative = Path(unquote(parsed.path)).resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return None
    if relative.suffix != ".lean" or relative.parts[:1] == (".lake",):
        return None
    return ".".join(relative.with_suffix("").parts)


def _module_file(module: str) -> Path:
    return Path.cwd().joinpath(*module.split(".")).with_suffix(".lean")


def _marks(decl: Decl, decls: dict[str, Decl], workspace: set[str]) -> list[str]:
    found: list[str] = []
    todo = [decl.name]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        current = decls.get(name)
        if name in seen or current is None or _module(current.uri) not in workspace:
            continue
        seen.add(name)
        if re.search(r"\bunsafe\b", current.modifiers):
            found.append(f"unsafe:{name}")
        if re.search(r"\bimplemented_by\b", current.attributes):
            found.append(f"implemented_by:{name}")
        if re.search(r"\bextern\b", current.attributes):
            found.append(f"extern:{name}")
        todo.extend(current.uses)
    return found
