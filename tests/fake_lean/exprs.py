"""Tiny helpers over Lean expressions as strings: splitting, rewriting, arithmetic."""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable

_OPEN = "([{⟨"
_CLOSE = ")]}⟩"


def norm(text: str) -> str:
    return " ".join(text.split())


def strip_parens(text: str) -> str:
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and _top_level_span(text):
        text = text[1:-1].strip()
    return text


def _top_level_span(text: str) -> bool:
    depth = 0
    for index, char in enumerate(text):
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth == 0 and index != len(text) - 1:
                return False
    return True


def split_top(text: str, sep: str) -> tuple[str, str] | None:
    """Split at the first occurrence of ``sep`` outside brackets."""
    depth = 0
    index = 0
    while index < len(text):
        char = text[index]
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
        elif depth == 0 and text.startswith(sep, index):
            return text[:index].strip(), text[index + len(sep) :].strip()
        index += 1
    return None


def split_all(text: str, sep: str) -> list[tuple[int, str]]:
    """Pieces of ``text`` separated by top-level ``sep``, with their offsets."""
    pieces: list[tuple[int, str]] = []
    depth = 0
    start = 0
    for index, char in enumerate(text):
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
        elif depth == 0 and text.startswith(sep, index):
            pieces.append((start, text[start:index]))
            start = index + len(sep)
    pieces.append((start, text[start:]))
    return pieces


_OPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: lambda a, b: max(a - b, 0),
    ast.Mult: operator.mul,
    ast.FloorDiv: lambda a, b: a // b if b else 0,
    ast.Div: lambda a, b: a // b if b else 0,
    ast.Mod: lambda a, b: a % b if b else a,
}


def eval_nat(text: str) -> int | None:
    """Evaluate natural-number arithmetic (``+ - * / %``, Lean's truncating semantics)."""
    if not re.fullmatch(r"[\d\s+*/%()\-]+", text):
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None
    return _eval(tree.body)


def _eval(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _eval(node.left), _eval(node.right)
        if left is None or right is None:
            return None
        return _OPS[type(node.op)](left, right)
    return None


def simplify(text: str) -> str:
    """What ``simp`` does to one side of an equation in the fake: unit laws and arithmetic."""
    text = norm(strip_parens(text))
    value = eval_nat(text)
    if value is not None:
        return str(value)
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r"\s*\+\s*0\b(?!\.)", "", text)
        text = re.sub(r"(?<![\w.])0\s*\+\s*", "", text)
        text = re.sub(r"\s*\*\s*1\b(?!\.)", "", text)
        text = re.sub(r"(?<![\w.])1\s*\*\s*", "", text)
    return norm(strip_parens(text))


def is_reflexive(target: str, simp: bool = False) -> bool:
    parts = split_top(strip_parens(target), " = ")
    if parts is None:
        return False
    left, right = parts
    if simp:
        return simplify(left) == simplify(right)
    return norm(strip_parens(left)) == norm(strip_parens(right)) or (
        eval_nat(left) is not None and eval_nat(left) == eval_nat(right)
    )


def replace_term(target: str, old: str, new: str) -> str | None:
    """Replace every whole-token occurrence of ``old``; None when there is none."""
    pattern = re.compile(r"(?<![\w.'])" + re.escape(norm(old)) + r"(?![\w'])")
    source = norm(target)
    if not pattern.search(source):
        return None
    return pattern.sub(lambda _: new if " " not in new else f"({new})", source)
