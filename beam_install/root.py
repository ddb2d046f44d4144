"""Validating and claiming an install root (docs/RUNTIME.md, "The install root").

`inspect_root` only reads: it refuses a root that is not a directory, holds entries the installer
does not own, or carries a marker that is invalid, newer, or names another root. `claim_root`
creates the directories and the marker; the marker is written to `state/staging/` first and
renamed into place, so a killed installer never leaves a torn marker behind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from beam_runtime import layout
from beam_runtime.errors import BeamError
from beam_runtime.record_check import load_marker

RENAME_FIX = (
    "stop lean-beam clients, rename the whole install root aside (keep it) and run "
    "`lean-beam install` again, or choose another --install-root"
)


def _refuse(message: str, path: Path, fix: str = RENAME_FIX) -> BeamError:
    return BeamError("invalidInstallRoot", message, fix, {"path": str(path)})


def _check_entries(directory: Path, allowed: frozenset[str], prefix: str | None) -> None:
    for name in sorted(os.listdir(directory)):
        if name in allowed or (prefix is not None and name.startswith(prefix)):
            continue
        raise _refuse(
            f"the install root contains an entry lean-beam does not own: {directory / name}",
            directory / name,
            "move that entry out of the install root, or choose another --install-root",
        )


def _check_kinds(root: Path) -> None:
    for name in ("versions", "bin", "state"):
        path = root / name
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            raise _refuse(f"{path} must be a real directory", path)
    current = layout.current_link(root)
    if current.exists() and not current.is_symlink():
        raise _refuse(f"{current} must be a symlink to versions/<id>", current)


def _check_marker(root: Path) -> bool:
    """True when a sound marker exists, False when there is none; raises when it is bad."""
    path = layout.marker_path(root)
    if not os.path.lexists(path):
        return False
    if path.is_symlink() or not path.is_file():
        raise _refuse(f"install root marker {path} is not a regular file", path)
    try:
        raw = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise _refuse(f"install root marker {path} is unreadable: {exc}", path) from None
    schema = raw.get("schema") if isinstance(raw, dict) else None
    if isinstance(schema, int) and not isinstance(schema, bool) and schema > 1:
        raise _refuse(
            f"install root {root} was created by a newer lean-beam (marker schema {schema})",
            path,
            "run a newer lean-beam, or choose another --install-root",
        )
    try:
        marker = load_marker(root)
    except (OSError, ValueError) as exc:
        detail = str(exc).splitlines()[0]
        raise _refuse(f"install root marker {path} is invalid ({detail})", path) from None
    if os.path.realpath(marker["root"]) != str(root):
        raise _refuse(f"install root marker {path} names a different root: {marker['root']}", path)
    return True


def inspect_root(root: Path) -> bool:
    """Refuse a root lean-beam must not write to; True when it is already claimed (no writes)."""
    if not root.exists():
        return False
    if not root.is_dir():
        raise _refuse(f"install root {root} exists and is not a directory", root)
    _check_entries(root, layout.ROOT_ENTRIES, layout.CURRENT_TMP_PREFIX)
    _check_kinds(root)
    state = layout.state_dir(root)
    if state.is_dir():
        _check_entries(state, layout.STATE_ENTRIES, layout.STATE_TMP_PREFIX)
        for name in ("leases", "staging", "trash", "gcroots"):
            path = state / name
            if path.is_symlink() or (path.exists() and not path.is_dir()):
                raise _refuse(f"{path} must be a real directory", path)
    return _check_marker(root)


def prepare_state(root: Path) -> None:
    """Create the root and `state/` (needed before the lock can be taken)."""
    layout.state_dir(root).mkdir(parents=True, exist_ok=True)


def claim_root(root: Path) -> None:
    """Create the tree's directories and, when missing, the marker (holding the lock)."""
    for directory in (
        layout.versions_dir(root),
        layout.bin_dir(root),
        layout.leases_dir(root),
        layout.staging_dir(root),
    ):
        directory.mkdir(parents=True, exist_ok=True)
    marker = layout.marker_path(root)
    if os.path.lexists(marker):
        return
    from beam_runtime.records import Marker  # pydantic: only when claiming a new root

    body = Marker.model_validate({"owner": "lean-beam", "schema": 1, "root": str(root)})
    tmp = layout.staging_dir(root) / f"marker-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(body.to_json()) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, marker)
