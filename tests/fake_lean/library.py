"""The names the fake knows without a declaration in the document (a sliver of Lean's core)."""

from __future__ import annotations

import re

KEYWORDS = frozenset(
    [
        "fun",
        "λ",
        "by",
        "let",
        "have",
        "show",
        "from",
        "if",
        "then",
        "else",
        "match",
        "with",
        "do",
        "return",
        "at",
        "in",
        "where",
        "deriving",
        "structure",
        "class",
        "instance",
        "theorem",
        "lemma",
        "def",
        "example",
        "abbrev",
        "inductive",
        "namespace",
        "section",
        "end",
        "open",
        "variable",
        "universe",
        "import",
        "module",
        "prelude",
        "private",
        "protected",
        "noncomputable",
        "partial",
        "unsafe",
        "mutual",
        "set_option",
        "attribute",
        "macro",
        "syntax",
        "notation",
        "infix",
        "infixl",
        "infixr",
        "calc",
        "suffices",
        "obtain",
        "using",
        "this",
        "sorry",
        "Type",
        "Sort",
        "Prop",
        "true",
        "false",
        "rec",
        "extends",
        "for",
        "mut",
        "try",
        "catch",
        "finally",
        "unless",
        "then",
        "fun_prop",
    ]
)

# name -> type ("" when the fake knows the name but not its type)
BUILTINS: dict[str, str] = {
    "Nat": "Type",
    "Int": "Type",
    "String": "Type",
    "Bool": "Type",
    "Unit": "Type",
    "Float": "Type",
    "Char": "Type",
    "List": "Type u → Type u",
    "Array": "Type u → Type u",
    "Option": "Type u → Type u",
    "Fin": "Nat → Type",
    "Inhabited": "Sort u → Sort (max 1 u)",
    "Nonempty": "Sort u → Prop",
    "True": "Prop",
    "False": "Prop",
    "Not": "Prop → Prop",
    "And": "Prop → Prop → Prop",
    "Or": "Prop → Prop → Prop",
    "Iff": "Prop → Prop → Prop",
    "Eq": "α → α → Prop",
    "trivial": "True",
    "True.intro": "True",
    "rfl": "",
    "id": "α → α",
    "absurd": "a → ¬a → b",
    "And.intro": "a → b → a ∧ b",
    "And.left": "a ∧ b → a",
    "And.right": "a ∧ b → b",
    "Or.inl": "a → a ∨ b",
    "Or.inr": "b → a ∨ b",
    "Iff.intro": "(a → b) → (b → a) → (a ↔ b)",
    "Nat.succ": "Nat → Nat",
    "Nat.zero": "Nat",
    "Nat.add": "Nat → Nat → Nat",
    "Nat.add_zero": "∀ (n : Nat), n + 0 = n",
    "Nat.zero_add": "∀ (n : Nat), 0 + n = n",
    "Nat.add_comm": "∀ (n m : Nat), n + m = m + n",
    "Nat.mul_one": "∀ (n : Nat), n * 1 = n",
    "Nat.le_refl": "∀ (n : Nat), n ≤ n",
    "Eq.refl": "∀ (a : α), a = a",
    "Eq.symm": "a = b → b = a",
    "congrArg": "a₁ = a₂ → f a₁ = f a₂",
    "Classical.em": "∀ (p : Prop), p ∨ ¬p",
    "IO.println": "String → IO Unit",
}

NAMESPACES = frozenset(
    [
        "Nat",
        "Int",
        "List",
        "Array",
        "String",
        "Option",
        "Bool",
        "Eq",
        "And",
        "Or",
        "Iff",
        "Function",
        "Classical",
        "Exists",
        "True",
        "False",
        "Not",
        "Prod",
        "Sum",
        "Fin",
        "Char",
        "Float",
        "IO",
        "Lean",
        "Std",
        "Mathlib",
        "Decidable",
        "HAdd",
        "HMul",
    ]
)

LIBRARY_MODULES = frozenset(
    [
        "Init",
        "Lean",
        "Std",
        "Lake",
        "Mathlib",
        "Batteries",
        "Aesop",
        "Qq",
        "Plausible",
        "ProofWidgets",
        "ImportGraph",
    ]
)

_AUTO_BOUND = re.compile(r"^[^\W\d_][₀-₉\d']*$")


def builtin_type(name: str) -> str | None:
    if name in BUILTINS:
        return BUILTINS[name]
    head = name.split(".", 1)[0]
    if "." in name and head in NAMESPACES:
        return ""
    return None


def auto_bound(name: str) -> bool:
    """Single-letter names are auto-bound implicits in signatures (Lean's default)."""
    return bool(_AUTO_BOUND.match(name))
