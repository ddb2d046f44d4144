"""Whether the imports a Lean worker loaded are still current (stale imports of scratch documents).

Lean loads a document's imports once, when its worker process starts; a module rebuilt later
(``lean_save``, or a ``lake build`` outside the broker) is not seen by that worker. A scratch
document lives across many probes, so before each probe the broker compares a stamp of each
import with the one taken when the scratch document was opened: the ``.olean`` modification time
Lake wrote (in the workspace's build directory or a package's) and a counter the broker's own
``lean_save`` bumps. Lean's own notices ("Imports are out of date and should/must be rebuilt")
are the third signal; ``diagnostics.is_stale_marker`` recognizes them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

Stamp = tuple[int | None, int]  # (.olean mtime in ns or None when absent, lean_save count)


def header_text(text: str) -> str:
    """The lines that make up the header: a change there restarts Lean's worker by itself."""
    lines = text.split("\n")
    kept: list[str] = []
    for line in lines:
        stripped = line.strip()
        if stripped and not stripped.startswith(("import", "public", "module", "prelude", "--")):
            break
        kept.append(line)
    return "\n".join(kept).strip()


def olean_candidates(root: str, module: str) -> list[str]:
    rel = os.path.join(*module.split(".")) + ".olean"
    found = [os.path.join(root, ".lake", "build", "lib", "lean", rel)]
    packages = os.path.join(root, ".lake", "packages")
    try:
        names = sorted(os.listdir(packages))
    except OSError:
        names = []
    for name in names:
        found.append(os.path.join(packages, name, ".lake", "build", "lib", "lean", rel))
    return found


def _mtime(paths: list[str]) -> int | None:
    for path in paths:
        try:
            return os.stat(path).st_mtime_ns
        except OSError:
            continue
    return None


def stamps(root: str, modules: list[str], saves: Mapping[str, int]) -> dict[str, Stamp]:
    return {
        module: (_mtime(olean_candidates(root, module)), saves.get(module, 0)) for module in modules
    }


def changed(before: Mapping[str, Stamp], now: Mapping[str, Stamp]) -> list[str]:
    """Modules whose artifacts differ from what the worker loaded, in import order."""
    return [module for module, stamp in now.items() if before.get(module, stamp) != stamp]
