"""Identity of the running code (docs/RUNTIME.md, "Identity").

A process knows its runtime from where its own code lives: code under
`<root>/versions/<id>/site/` belongs to runtime `<id>` of install root `<root>`; anything else is
a development identity. Stdlib only and cheap (no hashing, no pydantic): `--version` and the
console scripts' delegation check both run this. It never raises because of a broken install: a
broken install is reported in `runtime_error`.
"""

from __future__ import annotations

import os
import sys

from beam_runtime.install_root import (
    MANIFEST_SCHEMA,
    MARKER_SCHEMA,
    InstallRoot,
    marker_problem,
    parse_json,
    read_manifest,
)
from beam_runtime.layout import COMMANDS
from beam_runtime.version import VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

MCP_PROTOCOL = "2026-07-28"
# Re-exported: the readers of the root's records live in `install_root`.
__all__ = ["MANIFEST_SCHEMA", "MARKER_SCHEMA", "marker_problem", "parse_json", "read_manifest"]


class RuntimeLocation:
    """Where an installed runtime's code runs from: its root, id and directory."""

    __slots__ = ("root", "runtime_dir", "runtime_id")

    def __init__(self, root: Path, runtime_id: str, runtime_dir: Path) -> None:
        self.root = root
        self.runtime_id = runtime_id
        self.runtime_dir = runtime_dir

    def __repr__(self) -> str:
        return f"RuntimeLocation(root={self.root!r}, runtime_id={self.runtime_id!r})"


def runtime_dir_of(path: str) -> str | None:
    """The runtime directory containing `path` when it lies under `.../versions/<id>/site/`."""
    parts = os.path.realpath(path).split(os.sep)
    for index in range(len(parts) - 1, 2, -1):
        if parts[index] == "site" and parts[index - 2] == "versions" and parts[index - 1]:
            return os.sep.join(parts[:index]) or os.sep
    return None


def code_runtime_dir() -> str | None:
    """The runtime directory this code runs from, or None for development code."""
    return runtime_dir_of(__file__)


def locate_runtime() -> RuntimeLocation | None:
    """The installed runtime this process runs from, or None (development identity)."""
    found = code_runtime_dir()
    if found is None:
        return None
    from pathlib import Path

    runtime = Path(found)
    return RuntimeLocation(runtime.parent.parent, runtime.name, runtime)


def runtime_error(runtime_dir: str) -> str | None:
    """Cheap structural check of an installed runtime: the marker, then the manifest."""
    root = os.path.dirname(os.path.dirname(runtime_dir))
    problem = marker_problem(root)
    if problem is None:
        problem = read_manifest(runtime_dir)[1]
    return problem


def runtime_is_current(runtime_dir: str) -> bool:
    """True when `<root>/current` names this runtime's directory."""
    root = InstallRoot(os.path.dirname(os.path.dirname(runtime_dir)))
    return root.current_id() == os.path.basename(runtime_dir)


def _dev_beam_cli() -> str | None:
    candidate = os.path.join(os.path.dirname(sys.executable), COMMANDS[2])
    return candidate if os.path.isfile(candidate) else None


def runtime_identity(name: str, *, beam_cli: str | None = None) -> dict[str, Any]:
    """The identity fields (docs/RUNTIME.md, "Identity") of the process running this code."""
    identity: dict[str, Any] = {"name": name, "version": VERSION}
    python = os.path.realpath(sys.executable)
    runtime = code_runtime_dir()
    if runtime is None:
        identity.update(
            beam_cli=beam_cli or _dev_beam_cli(), python=python, mcp_protocol=MCP_PROTOCOL
        )
        return identity
    identity.update(
        runtime_id=os.path.basename(runtime),
        install_root=os.path.dirname(os.path.dirname(runtime)),
        runtime_dir=runtime,
        beam_cli=beam_cli or os.path.join(runtime, "bin", COMMANDS[2]),
        python=python,
        mcp_protocol=MCP_PROTOCOL,
        runtime_current=runtime_is_current(runtime),
        runtime_error=runtime_error(runtime),
    )
    return identity


def format_identity(identity: dict[str, Any]) -> str:
    """Text `--version`: `<name> <version>` then `key: value` lines."""
    lines = [f"{identity['name']} {identity['version']}"]
    for key, value in identity.items():
        if key in ("name", "version"):
            continue
        if value is None:
            shown = "none"
        elif isinstance(value, bool):
            shown = "true" if value else "false"
        else:
            shown = str(value)
        lines.append(f"{key}: {shown}")
    return "\n".join(lines) + "\n"
