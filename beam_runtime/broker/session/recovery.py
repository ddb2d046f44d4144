"""The recovery plan of a ``syncBarrierIncomplete`` error.

When Lean says the imports are stale or could not be built, the caller needs to know which
direct dependencies to checkpoint (``lean_save``) before refreshing the file, and that
``lake build`` is the catch-all.
"""

from __future__ import annotations

import os
from typing import Any

from beam_runtime.broker.session.paths import SourceFile, display_path


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
    from beam_runtime.broker.session import (
        header,  # and its comment scanner: only on this error path
    )

    deps = []
    for module in header.imports(text):
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
