"""The import header of a Lean file: the modules it imports, read once for every consumer.

The header is the leading run of ``module``, ``prelude`` and ``import`` commands (with
``public``, ``meta`` and ``all`` modifiers); comments anywhere in it, nested block comments
included, are skipped as Lean skips them. The dependency cone of ``lean_verify``, the recovery
plan of a stale-imports error and the freshness stamps of scratch documents all read it here.
"""

from __future__ import annotations

import re

from beam_runtime.search.scan import code_lines

_IMPORT = re.compile(r"^\s*(?:public\s+|private\s+)?(?:meta\s+)?import\s+(?:all\s+)?(.*)$")
_HEADER_LINES = 400  # headers are short; a file that imports after this many lines is odd
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_'!?]*$")


def imports(text: str) -> list[str]:
    """Module names the header imports, in order, each in its canonical spelling
    (`canonical_module`): `import «Demo».«Basic»` imports `Demo.Basic`, as Lean reads it."""
    modules: list[str] = []
    head = "\n".join(text.split("\n", _HEADER_LINES)[:_HEADER_LINES])
    for line in code_lines(head):
        stripped = line.strip()
        if not stripped or stripped in ("prelude", "module"):
            continue
        match = _IMPORT.match(line)
        if match is None:
            break
        modules.extend(canonical_module(name) for name in _names(match.group(1)))
    return modules


def _names(rest: str) -> list[str]:
    """The module names of an import line, split on white space outside `«»` escapes."""
    names: list[str] = []
    current: list[str] = []
    escaped = False
    for char in rest:
        if escaped or not char.isspace():
            current.append(char)
            escaped = (escaped or char == "«") and char != "»"
        elif current:
            names.append("".join(current))
            current = []
    if current:
        names.append("".join(current))
    return names


def canonical_module(name: str) -> str:
    """A module name with `«»` only where a component needs it: `«Demo».«Basic»` and
    `«Demo».Basic` are both `Demo.Basic`; `«Foo Bar».Baz` stays as it is."""
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for char in name:
        if escaped:
            if char == "»":
                escaped = False
            else:
                current.append(char)
        elif char == "«":
            escaped = True
        elif char == ".":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return ".".join(part if _PLAIN.match(part) else f"«{part}»" for part in parts)
