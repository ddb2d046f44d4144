"""The recovery plan of a ``syncBarrierIncomplete`` error (decision 30).

When Lean says the imports are stale or could not be built, the caller needs to know which
direct dependencies to checkpoint (``lean_save``) before refreshing the file, and that
``lake build`` is the catch-all.
"""

from __future__ import annotations

import os
import re
from typing import Any

from beam_runtime.broker.paths import SourceFile, display_path

_IMPORT = re.compile(r"^\s*(?:public\s+|private\s+)?(?:meta\s+)?import\s+(?:all\s+)?(.+)$")
_HEADER_NOISE = re.compile(r"^\s*(--.*)?$|^\s*(module|prelude)\s*$")


def header_imports(text: str) -> list[str]:
    """Module names imported by the header (the leading block of ``import`` lines)."""
    modules: list[str] = []
    in_comment = False
    for line in text.split("\n"):
        stripped = line.strip()
        if in_comment:
            in_comment = "-/" not in stripped
            continue
        if stripped.startswith("/-"):
            in_comment = "-/" not in stripped[2:]
            continue
        match = _IMPORT.match(line)
        if match:
            code = match.group(1).split("--", 1)[0]
            modules.extend(code.split())
        elif not _HEADER_NOISE.match(line):
            break
    return modules


def module_source(root: str, module: str) -> str | None:
    path = os.path.join(root, *module.split(".")) + ".lean"
    return path if os.path.isfile(path) else None


def _needs_save(root: str, module: str, source: str) -> bool:
    olean = os.path.join(root, ".lake", "build", "lib", "lean", *module.split(".")) + ".olean"
    try:
        return os.path.getmtime(olean) < os.path.getmtime(source)
    except OSError:
        return True


def incomplete_data(target: SourceFile, text: str, evidence: list[str]) -> dict[str, Any]:
    deps = []
    for module in header_imports(text):
        source = module_source(target.root, module)
        if source is None:
            continue
        deps.append(
            {
                "module": module,
                "path": display_path(target.root, source),
                "needsSave": _needs_save(target.root, module, source),
            }
        )
    plan: list[dict[str, Any]] = [
        {"tool": "lean_save", "path": dep["path"]} for dep in deps if dep["needsSave"]
    ]
    plan.append({"tool": "lean_refresh", "path": target.display})
    plan.append({"command": "lake build", "when": "the refresh still reports stale imports"})
    return {
        "targetPath": target.display,
        "staleDirectDeps": deps,
        "recoveryPlan": plan,
        "evidence": evidence,
    }
