"""The declaration scan: full names through namespaces, signatures as written, comments ignored."""

from __future__ import annotations

from beam_runtime.search.index import match_expression, name_fragments
from beam_runtime.search.scan import declarations

SOURCE = """\
/- theorem hidden : True := trivial
   /- nested -/ def alsoHidden := 1 -/
namespace Foo.Bar
/-- A doc comment: theorem notThis : True -/
@[simp]
theorem add_zero' (n : Nat) :
    n + 0 = n := by simp
private def helper {α : Type} [Inhabited α] : α := default -- def trailing
instance : Inhabited Nat := ⟨0⟩
instance (priority := low) instFoo : Inhabited Bool := ⟨true⟩
section
set_option debug.skipKernelTC true
unsafe def bad : Nat := 0
end
@[implemented_by bad] def good : Nat := 1
set_option debug.skipKernelTC true in
theorem t2 : 1 = 1 := rfl
structure Point (α : Type) extends Foo where
  x : α
inductive Color
| red | green
axiom myAx : False
def _root_.Nat.triple (n : Nat) : Nat := 3 * n
end Foo.Bar
example : True := trivial
lemma top : True := trivial
"""


def by_name() -> dict[str, object]:
    return {decl.name: decl for decl in declarations(SOURCE)}


def test_names_kinds_lines_and_signatures() -> None:
    found = declarations(SOURCE)
    assert [(d.name, d.kind, d.line) for d in found] == [
        ("Foo.Bar.add_zero'", "theorem", 6),
        ("Foo.Bar.helper", "def", 8),
        ("Foo.Bar.instFoo", "instance", 10),
        ("Foo.Bar.bad", "def", 13),
        ("Foo.Bar.good", "def", 15),
        ("Foo.Bar.t2", "theorem", 17),
        ("Foo.Bar.Point", "structure", 18),
        ("Foo.Bar.Color", "inductive", 20),
        ("Foo.Bar.myAx", "axiom", 22),
        ("Nat.triple", "def", 23),
        ("top", "lemma", 26),
    ]
    signatures = {d.name: d.signature for d in found}
    assert signatures["Foo.Bar.add_zero'"] == "add_zero' (n : Nat) : n + 0 = n"
    assert signatures["Foo.Bar.helper"] == "helper {α : Type} [Inhabited α] : α"
    assert signatures["Foo.Bar.Point"] == "Point (α : Type) extends Foo"
    assert signatures["Foo.Bar.myAx"] == "myAx : False"


def test_markers_and_the_kernel_option() -> None:
    found = {d.name: d for d in declarations(SOURCE)}
    assert found["Foo.Bar.bad"].modifiers == "unsafe" and found["Foo.Bar.bad"].skip_kernel_tc
    assert found["Foo.Bar.good"].modifiers == "@[implemented_by bad]"
    assert not found["Foo.Bar.good"].skip_kernel_tc  # the section that set it has ended
    assert found["Foo.Bar.t2"].skip_kernel_tc
    assert not found["Foo.Bar.add_zero'"].skip_kernel_tc


def test_fragments_and_query_expressions() -> None:
    assert name_fragments("Nat.mulComm_left") == "Nat mulComm left mul Comm"
    assert match_expression("mul_comm  Nat") == '"mul"* AND "comm"* AND "nat"*'
    assert match_expression(" + = ") is None
    assert match_expression("a + b = b + a") == '"a" AND "b"'  # whole words, each once
    assert match_expression("mul_one 1") == '"mul"* AND "one"* AND "1"'


def test_signatures_stop_at_whole_words_outside_brackets() -> None:
    source = (
        "structure S' where\n  x : Nat\n"
        "def nowhere (somewhere : Nat) : Nat := somewhere\n"
        "def f (x : Nat := 1) {y : Nat} [⟨a⟩ : C] : Nat := x\n"
        "inductive T deriving Repr\n"
        "def g : x'where = y_deriving := rfl\n"
        "class inductive K (α : Type)\n  | mk : K α\n"
        "def h (x : Nat) :\n    (x + 1 :\n      Nat) = x + 1 := rfl\n"
        "instance (priority := low) : Inhabited Nat := ⟨0⟩\n"
        "def (priority := low) notAnInstance : Nat := 0\n"
    )
    found = [(d.name, d.kind, d.signature, d.line) for d in declarations(source)]
    assert found == [
        ("S'", "structure", "S'", 1),
        ("nowhere", "def", "nowhere (somewhere : Nat) : Nat", 3),
        ("f", "def", "f (x : Nat := 1) {y : Nat} [⟨a⟩ : C] : Nat", 4),
        ("T", "inductive", "T", 5),
        ("g", "def", "g : x'where = y_deriving", 6),
        ("K", "class", "K (α : Type)", 7),
        ("h", "def", "h (x : Nat) : (x + 1 : Nat) = x + 1", 9),
    ]
