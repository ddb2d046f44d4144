"""``lean_save``: which module a file is, what Lake wrote for it, and the source hash.

Saving is a checkpoint through Lake: ``lake build +Module`` in the root, then the artifacts that
exist under ``.lake/build`` are reported. It is not a clean batch build and the docs say so.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

from beam_runtime.broker.errors import BrokerError

LAKEFILES = ("lakefile.lean", "lakefile.toml")
_COMPONENT = r"^[A-Za-z_][A-Za-z0-9_'!?]*$"  # compiled when a module name is asked for
# Optional artifacts: result field -> (directory under .lake/build, suffix).
_OPTIONAL = {
    "olean_server": ("lib/lean", ".olean.server"),
    "olean_private": ("lib/lean", ".olean.private"),
    "ir": ("lib/lean", ".ir"),
    "bc": ("ir", ".bc"),
}


def source_hash(data: bytes) -> str:
    import hashlib  # only a save needs it (see ``versions.content_digest``)

    return hashlib.sha256(data).hexdigest()[:16]


def has_lake_workspace(root: str) -> bool:
    return any(os.path.isfile(os.path.join(root, name)) for name in LAKEFILES)


def module_name(root: str, abs_path: str) -> str:
    """``A/B.lean`` under the root is ``A.B``; anything else is ``saveTargetNotModule``."""
    rel = os.path.relpath(abs_path, root)
    parts = PurePosixPath(*Path(rel).parts).parts
    problem = None
    if rel.startswith(os.pardir) or os.path.isabs(rel):
        problem = "it is outside the workspace root"
    elif not rel.endswith(".lean"):
        problem = "it is not a .lean file"
    elif parts[0] in (".lake", "lake-packages") or rel in LAKEFILES:
        problem = "it is not a module of this workspace"
    else:
        names = [*parts[:-1], parts[-1][: -len(".lean")]]
        component = re.compile(_COMPONENT)
        if all(component.match(name) for name in names):
            return ".".join(names)
        problem = "its path is not a valid module name"
    raise BrokerError(
        "saveTargetNotModule",
        f"{rel} cannot be saved: {problem}",
        {"path": abs_path},
    )


def artifacts(root: str, module: str) -> dict[str, str]:
    """Artifact fields for the files Lake wrote; a missing ``.olean``/``.ilean`` is an error."""
    rel = module.replace(".", "/")
    build = Path(root) / ".lake" / "build"
    lib = build / "lib" / "lean"
    found: dict[str, str] = {}
    required = {"olean": lib / f"{rel}.olean", "ilean": lib / f"{rel}.ilean"}
    for key, path in required.items():
        if not path.is_file():
            raise BrokerError(
                "internalError",
                f"Lake finished but {path} is missing",
                {"module": module, "missing": str(path)},
            )
        found[key] = str(path)
    c_file = build / "ir" / f"{rel}.c"
    if c_file.is_file():
        found["c"] = str(c_file)
    for trace in (lib / f"{rel}.trace", lib / f"{rel}.olean.trace"):
        if trace.is_file():
            found["trace"] = str(trace)
            break
    for key, (folder, suffix) in _OPTIONAL.items():
        path = build / folder / f"{rel}{suffix}"
        if path.is_file():
            found[key] = str(path)
    return found


def unknown_target(output: list[str]) -> bool:
    text = "\n".join(output).lower()
    return "unknown target" in text or "unknown module" in text or "no such target" in text


def build_failure(module: str, code: int | None, output: list[str]) -> dict[str, Any]:
    return {"module": module, "exit_code": code, "output_tail": output[-20:]}
