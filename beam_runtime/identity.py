"""Identity of the running code (runtime.md "Identity", decision 11).

A process knows its runtime from where its own code lives: code under
`<root>/versions/<id>/site/` belongs to runtime `<id>` of install root `<root>`; anything else is
a development identity. Stdlib only and cheap (no hashing, no pydantic): `--version` and the
console scripts' delegation check both run this. It never raises because of a broken install: a
broken install is reported in `runtime_error`.
"""

from __future__ import annotations

import os
import sys

from beam_runtime.layout import COMMANDS, CURRENT_NAME, MANIFEST_NAME, MARKER_NAME
from beam_runtime.version import VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

MCP_PROTOCOL = "2026-07-28"
MARKER_SCHEMA = 1
MANIFEST_SCHEMA = 1


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


class _ScanContext:
    """What `_json.make_scanner` reads from a `JSONDecoder`, without importing `json`."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return float(name.replace("Infinity", "inf"))


_BLANK = " \t\n\r"


def parse_json(text: str) -> Any:
    """`json.loads` for the start-up path: `import json` pulls in `re` (10-20 ms).

    CPython's C scanner parses well-formed input exactly as `json.loads` would; anything it does
    not accept (and any interpreter without it) goes to `json.loads`, which then decides and
    raises its usual ValueError.
    """
    try:
        from _json import make_scanner

        scan = make_scanner(_ScanContext)  # type: ignore[arg-type]
        start = len(text) - len(text.lstrip(_BLANK))
        value, end = scan(text, start)
        if not text[end:].strip(_BLANK):
            return value
    except Exception:  # the C scanner reports its errors through `json`: let it decide
        pass
    import json

    return json.loads(text)


def _load_json(path: str) -> tuple[Any, str | None]:
    if os.path.islink(path) or not os.path.isfile(path):
        return None, "not a regular file"
    try:
        with open(path, "rb") as handle:
            return parse_json(handle.read().decode("utf-8")), None
    except (OSError, ValueError) as exc:
        return None, f"unreadable: {exc.__class__.__name__}"


def marker_problem(root: str) -> str | None:
    """Why `<root>`'s ownership marker is not sound (one line with the recovery), or None."""
    path = os.path.join(root, MARKER_NAME)
    recovery = (
        f"stop lean-beam clients, rename the whole install root {root} aside (keep it) "
        "and run `lean-beam install` again"
    )
    if not os.path.lexists(path):
        return f"install root marker {path} is missing; {recovery}"
    data, error = _load_json(path)
    if error is not None:
        return f"install root marker {path} is invalid ({error}); {recovery}"
    schema = data.get("schema") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("owner") != "lean-beam":
        return f"install root marker {path} is invalid (not owned by lean-beam); {recovery}"
    if type(schema) is int and schema > MARKER_SCHEMA:
        return f"install root marker {path} was created by a newer lean-beam (schema {schema})"
    if schema != MARKER_SCHEMA or type(schema) is not int:
        return f"install root marker {path} is invalid (schema {schema!r}); {recovery}"
    named = data.get("root")
    if not isinstance(named, str) or not os.path.isabs(named):
        return f"install root marker {path} is invalid (no absolute root); {recovery}"
    if os.path.realpath(named) != os.path.realpath(root):
        return f"install root marker {path} names a different root ({named}); {recovery}"
    return None


def read_manifest(runtime_dir: str) -> tuple[dict[str, Any] | None, str | None]:
    """The manifest of a runtime as a dict after cheap checks, or None and why not."""
    runtime_id = os.path.basename(runtime_dir)
    path = os.path.join(runtime_dir, MANIFEST_NAME)
    recovery = (
        f"stop lean-beam clients, move {runtime_dir} out of versions/ (keep it) "
        "and run `lean-beam install` again"
    )
    if not os.path.lexists(path):
        return None, f"manifest {path} is missing; {recovery}"
    data, error = _load_json(path)
    if error is not None:
        return None, f"manifest {path} is invalid ({error}); {recovery}"
    if not isinstance(data, dict) or data.get("schema") != MANIFEST_SCHEMA:
        return None, f"manifest {path} is invalid (not a schema 1 manifest); {recovery}"
    named = data.get("runtime_id")
    if named != runtime_id:
        return None, f"manifest {path} names runtime {named!r}, not {runtime_id}; {recovery}"
    if not isinstance(data.get("version"), str):
        return None, f"manifest {path} is invalid (no version); {recovery}"
    return data, None


def runtime_error(runtime_dir: str) -> str | None:
    """Cheap structural check of an installed runtime: the marker, then the manifest."""
    root = os.path.dirname(os.path.dirname(runtime_dir))
    problem = marker_problem(root)
    if problem is None:
        problem = read_manifest(runtime_dir)[1]
    return problem


def runtime_is_current(runtime_dir: str) -> bool:
    """True when `<root>/current` resolves to this runtime's directory."""
    link = os.path.join(os.path.dirname(os.path.dirname(runtime_dir)), CURRENT_NAME)
    if not os.path.exists(link):
        return False
    return os.path.realpath(link) == os.path.realpath(runtime_dir)


def _dev_beam_cli() -> str | None:
    candidate = os.path.join(os.path.dirname(sys.executable), COMMANDS[2])
    return candidate if os.path.isfile(candidate) else None


def runtime_identity(name: str, *, beam_cli: str | None = None) -> dict[str, Any]:
    """Identity fields of runtime.md for the process running this code."""
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
    """Text `--version`: `<name> <version>` then `key: value` lines (decision 11)."""
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
