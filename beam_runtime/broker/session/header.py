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


def imports(text: str) -> list[str]:
    """Module names the header imports, in order."""
    modules: list[str] = []
    head = "\n".join(text.split("\n", _HEADER_LINES)[:_HEADER_LINES])
    for line in code_lines(head):
        stripped = line.strip()
        if not stripped or stripped in ("prelude", "module"):
            continue
        match = _IMPORT.match(line)
        if match is None:
            break
        modules.extend(match.group(1).split())
    return modules
