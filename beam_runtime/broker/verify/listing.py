"""What a built module declares, asked of Lean itself (never read from the source).

A scratch document holds ``import Lean``, ``import <Module>`` and one ``#eval`` of a ``CoreM``
program that walks ``moduleData[i].constNames`` of that module (every constant it added to the
environment: theorems, definitions, instances with generated names, private declarations,
axioms, structure field defaults, auxiliary constants) and prints, one tab-separated line each::

    lean-beam-decl  NAME  KIND  LINE  END_LINE  AXIOMS  MARKS
    lean-beam-statement  NAME  TEXT          (for each locked name of the module)
    lean-beam-end  COUNT                     (last; ``lean-beam-missing MODULE`` instead when
                                              the module is not in the environment)

``NAME`` is the user-facing name (private names unmangled), ``KIND`` comes from the
``ConstantInfo``, ``LINE``/``END_LINE`` from Lean's declaration ranges (0 for a constant Lean
generated without one), ``AXIOMS`` is ``Lean.collectAxioms`` (what ``#print axioms`` prints),
and ``MARKS`` lists ``unsafe:``/``implemented_by:``/``extern:`` for each workspace constant the
declaration reaches through its type and value (the ``_unsafe_rec`` implementation Lean gives a
``partial def`` is not counted: it is how every ``partial def`` is compiled). ``TEXT`` is the
type pretty-printed with ``pp.all`` at unbounded width (newlines and tabs replaced by spaces):
the elaborated statement, independent of notation and ``open``s. Lean reports ``#eval``
output as an information message; output without the ``lean-beam-end`` line means Lean did
not finish the program.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from beam_runtime.broker.session import diagnostics as diag

_PROGRAM = """\
#eval show Lean.CoreM Unit from do
  let target := {target}
  let workspace : Array String := #[{workspace}]
  let locked : Array String := #[{locked}]
  let env ← Lean.getEnv
  let some index := env.header.moduleNames.findIdx? (fun n => toString n == target)
    | IO.println s!"lean-beam-missing\\t{{target}}"
  let inWorkspace := fun (c : Lean.Name) =>
    match env.getModuleIdxFor? c with
    | some i => workspace.contains (toString env.header.moduleNames[i]!)
    | none => true
  let names := env.header.moduleData[index]!.constNames
  for name in names do
    let user := (Lean.privateToUserName? name).getD name
    let some info := env.find? name | continue
    let kind := match info with
      | .thmInfo _ => "theorem" | .defnInfo _ => "def" | .axiomInfo _ => "axiom"
      | .opaqueInfo _ => "opaque" | .inductInfo _ => "inductive"
      | .ctorInfo _ => "constructor" | .recInfo _ => "recursor" | .quotInfo _ => "quot"
    let ranges ← Lean.findDeclarationRanges? name
    let span := match ranges with
      | some r => s!"{{r.range.pos.line}}\\t{{r.range.endPos.line}}"
      | none => "0\\t0"
    let axioms ← Lean.collectAxioms name
    let mut marks : Array String := #[]
    let mut todo : Array Lean.Name := #[name]
    let mut seen : Lean.NameSet := {{}}
    while !todo.isEmpty do
      let some c := todo.back? | break
      todo := todo.pop
      if seen.contains c || !inWorkspace c then continue
      seen := seen.insert c
      let some ci := env.find? c | continue
      if ci.isUnsafe then marks := marks.push s!"unsafe:{{c}}"
      if let some impl := Lean.Compiler.getImplementedBy? env c then
        if impl != c.str "_unsafe_rec" then marks := marks.push s!"implemented_by:{{c}}"
      if Lean.isExtern env c then marks := marks.push s!"extern:{{c}}"
      todo := todo ++ ci.type.getUsedConstants
      if let some v := ci.value? then todo := todo ++ v.getUsedConstants
    let axiomText := ",".intercalate (axioms.toList.map toString)
    let markText := ",".intercalate marks.toList
    IO.println s!"lean-beam-decl\\t{{user}}\\t{{kind}}\\t{{span}}\\t{{axiomText}}\\t{{markText}}"
    if locked.contains (toString user) then
      let shown ← Lean.Meta.MetaM.run' <| Lean.withOptions
        (fun o => ((o.setBool `pp.all true).setBool `pp.proofs true).setNat `pp.maxSteps 1000000000)
        (Lean.Meta.ppExpr info.type)
      let text := ((Std.Format.pretty shown 1000000000).replace "\\n" " ").replace "\\t" " "
      IO.println s!"lean-beam-statement\\t{{user}}\\t{{text}}"
  IO.println s!"lean-beam-end\\t{{names.size}}"
"""


@dataclass(frozen=True)
class Constant:
    name: str
    kind: str
    line: int  # 1-based; 0 when Lean generated the constant without a declaration range
    end_line: int
    axioms: tuple[str, ...]
    marks: tuple[str, ...]

    @property
    def written(self) -> bool:
        """Declared in the source (Lean kept a range for it), not generated from another."""
        return self.line > 0


@dataclass
class Listing:
    complete: bool = False  # Lean ran the program to its end
    missing: bool = False  # the module was not in the environment
    constants: list[Constant] = field(default_factory=list)
    statements: dict[str, str] = field(default_factory=dict)  # locked name -> statement text


def scratch_text(module: str, workspace: list[str], locked: list[str]) -> str:
    """The scratch document that lists ``module``'s constants."""
    program = _PROGRAM.format(
        target=_lean_string(module),
        workspace=", ".join(_lean_string(m) for m in workspace),
        locked=", ".join(_lean_string(n) for n in locked),
    )
    return f"import Lean\nimport {module}\n\n{program}"


def _lean_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # Lean's escapes for `"` and `\` are JSON's


def parse(diagnostics: list[diag.Diagnostic]) -> Listing:
    found = Listing()
    for item in diagnostics:
        for line in diag.message_of(item).split("\n"):
            _line(found, line.split("\t"))
    return found


def _line(found: Listing, cells: list[str]) -> None:
    head = cells[0].strip()
    if head == "lean-beam-decl" and len(cells) >= 7:
        name, kind, line, end, axioms, marks = cells[1:7]
        found.constants.append(
            Constant(
                name,
                kind,
                _number(line),
                _number(end),
                tuple(a for a in axioms.split(",") if a),
                tuple(m for m in marks.strip().split(",") if m),
            )
        )
    elif head == "lean-beam-statement" and len(cells) >= 3:
        found.statements[cells[1]] = "\t".join(cells[2:]).strip()
    elif head == "lean-beam-end":
        found.complete = True
    elif head == "lean-beam-missing":
        found.missing = True


def _number(text: str) -> int:
    return int(text) if text.strip().isdigit() else 0
