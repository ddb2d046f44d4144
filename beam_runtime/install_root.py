"""The one reader of an install root: its marker, `current`, runtime directories and leases.

Everything that asks what an install root holds asks an `InstallRoot` (or the record readers
below): the delegation fast path, identity, `runtime list`, prune, install and doctor, so they
agree on what `current` names and whether the marker is sound. `current` is read structurally:
it must be a link whose text is exactly `versions/<id>` with a valid runtime id, never resolved
through other links. Stdlib only and import-light (no `re`, `json` or pathlib at import): the
console scripts' delegation check runs this before any heavy import. Writers live in
`beam_install`.
"""

from __future__ import annotations

import os

from beam_runtime.layout import CURRENT_NAME, MANIFEST_NAME, MARKER_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MARKER_SCHEMA = 1
MANIFEST_SCHEMA = 1
# Runtime ids are `<version>-<hash>`: letters, digits and `.+_-`, never starting with a dot.
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+_-")


def valid_runtime_id(name: str) -> bool:
    """Whether `name` can be a runtime id (and so a single, safe path component)."""
    return 0 < len(name) <= 200 and name[0] != "." and _ID_CHARS.issuperset(name)


class InstallRoot:
    """Reads one install root; `path` is its canonical absolute path."""

    __slots__ = ("path",)

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)

    def __repr__(self) -> str:
        return f"InstallRoot({self.path!r})"

    @property
    def versions(self) -> str:
        return os.path.join(self.path, "versions")

    def runtime_dir(self, runtime_id: str) -> str:
        return os.path.join(self.path, "versions", runtime_id)

    def lease_path(self, runtime_id: str) -> str:
        return os.path.join(self.path, "state", "leases", f"{runtime_id}.lease")

    def marker_problem(self) -> str | None:
        return marker_problem(self.path)

    def current_id(self) -> str | None:
        """The id `current` names: its link text is exactly `versions/<id>`; else None."""
        try:
            target = os.readlink(os.path.join(self.path, CURRENT_NAME))
        except OSError:
            return None
        head, sep, name = target.partition("/")
        if head != "versions" or not sep or not valid_runtime_id(name):
            return None
        return name

    def current_runtime(self) -> str | None:
        """`current_id` when `versions/<id>` is a real directory (not a link)."""
        runtime_id = self.current_id()
        if runtime_id is None:
            return None
        runtime = self.runtime_dir(runtime_id)
        if os.path.islink(runtime) or not os.path.isdir(runtime):
            return None
        return runtime_id

    def runtime_names(self) -> list[str]:
        """Every entry of `versions/`, sorted (valid or not: callers validate)."""
        try:
            return sorted(os.listdir(self.versions))
        except (FileNotFoundError, NotADirectoryError):
            return []


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
