"""Reading and checking runtimes without pydantic: the hot paths' side of the on-disk records.

Install reuse, `runtime list`, prune and doctor validate markers and manifests here, against the
JSON Schema generated from the pydantic models of `beam_runtime.records` (the schema of record)
and committed as `beam_runtime/records_schema.py`, with `beam_runtime.schema_check` (the part of
JSON Schema our generated schemas use); tests check that it and pydantic agree.

Two checks of a runtime directory, each returning a one-line reason or None:

- `structural_problem`: marker, manifest and id; cheap. Used by `runtime list` and prune.
- `full_problem`: structural, plus every entry a regular file or a real directory, launchers
  executable, the recomputed payload hash equal to the manifest's, the bytecode's hash equal to
  its `bytecode_sha256`, and the bytecode record (`__pycache__/bytecode.sha256`, which the
  import gate checks every module against) exactly the recomputed lines. Required before reuse.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from beam_runtime import identity
from beam_runtime.bytecode_gate import GATE, RECORD
from beam_runtime.layout import COMMANDS, MANIFEST_NAME, MARKER_NAME, launcher_path
from beam_runtime.records_schema import MANIFEST, MARKER
from beam_runtime.schema_check import schema_problem as schema_problem  # also re-exported


class RecordError(ValueError):
    """A marker or manifest that is not valid JSON or breaks its schema."""


def parse_record(raw: bytes, schema: dict[str, Any]) -> dict[str, Any]:
    """Decode strict UTF-8 JSON and check it against `schema`; raises `RecordError`."""
    try:
        value = json.loads(raw.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise RecordError(f"not valid JSON: {exc}") from None
    problem = schema_problem(schema, value)
    if problem is not None:
        raise RecordError(problem)
    assert isinstance(value, dict)
    return value


class ManifestRecord:
    """A manifest that passed the schema check; read-only view of its JSON object."""

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @property
    def runtime_id(self) -> str:
        return str(self.data["runtime_id"])

    @property
    def version(self) -> str:
        return str(self.data["version"])

    @property
    def created_at(self) -> str:
        return str(self.data["created_at"])

    @property
    def bytes(self) -> int:
        return int(self.data["bytes"])

    @property
    def files(self) -> int:
        return int(self.data["files"])

    @property
    def bytecode_sha256(self) -> str:
        """ "" when the runtime has no bytecode (or predates the field)."""
        return str(self.data.get("bytecode_sha256", ""))

    @property
    def payload_sha256(self) -> str:
        return str(self.data["payload_sha256"])

    @property
    def python(self) -> dict[str, str]:
        return dict(self.data["python"])

    def to_json(self) -> dict[str, Any]:
        return json.loads(json.dumps(self.data))  # a deep copy


def load_marker(root: Path) -> dict[str, Any]:
    """Parse and check the marker (raises OSError or ValueError)."""
    return parse_record((root / MARKER_NAME).read_bytes(), MARKER)


def load_manifest(runtime_dir: Path) -> ManifestRecord:
    """Parse and check a manifest (raises OSError or ValueError)."""
    return ManifestRecord(parse_record((runtime_dir / MANIFEST_NAME).read_bytes(), MANIFEST))


def file_mode_tag(mode: int) -> str:
    """`755` for a file with any execute bit, else `644` (a runtime's modes are normalized)."""
    return "755" if mode & 0o111 else "644"


def hash_line(digest: str, mode_tag: str, relpath: str) -> bytes:
    return f"{digest}  {mode_tag}  {relpath}\n".encode()


def payload_sha256(lines: Iterable[bytes]) -> str:
    """sha256 over the hash lines, sorted by the UTF-8 bytes of their paths."""
    ordered = sorted(lines, key=lambda line: line.split(b"  ", 2)[2])
    total = hashlib.sha256()
    for line in ordered:
        total.update(line)
    return total.hexdigest()


def runtime_id_for(version: str, digest: str) -> str:
    return f"{version}-{digest[:16]}"


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _walk(runtime_dir: Path) -> Iterator[tuple[str, str, os.stat_result]]:
    """Every entry below `runtime_dir` except bytecode caches: (posix relpath, path, lstat)."""
    for current, dirnames, filenames in os.walk(runtime_dir):
        dirnames[:] = [name for name in dirnames if name != "__pycache__"]
        base = os.path.relpath(current, runtime_dir).replace(os.sep, "/")
        for name in sorted(dirnames + filenames):
            full = os.path.join(current, name)
            yield (name if base == "." else f"{base}/{name}"), full, os.lstat(full)


def bytecode_lines(runtime_dir: Path) -> tuple[list[bytes], str | None]:
    """(the hash lines of every bytecode file, sorted by path; problem).

    Bytecode is every file in a `__pycache__/` directory of the runtime except the runtime's own
    `__pycache__/`, which holds the bytecode record. A non-regular entry is a problem of its own.
    """
    lines: list[bytes] = []
    own = os.path.join(runtime_dir, "__pycache__")
    for current, dirnames, filenames in os.walk(runtime_dir):
        if os.path.basename(current) != "__pycache__" or current == own:
            continue
        base = os.path.relpath(current, runtime_dir).replace(os.sep, "/")
        for name in sorted(dirnames + filenames):
            full = os.path.join(current, name)
            info = os.lstat(full)
            if not stat.S_ISREG(info.st_mode):
                return [], f"{full} is not a regular file"
            tag = file_mode_tag(info.st_mode)
            lines.append(hash_line(file_sha256(full), tag, f"{base}/{name}"))
    lines.sort(key=lambda line: line.split(b"  ", 2)[2])
    return lines, None


def bytecode_digest(runtime_dir: Path) -> tuple[str, str | None]:
    """(sha256 over the bytecode files' hash lines, "" when there are none; problem).

    Python runs a runtime's bytecode instead of its sources, so it is held to what staging
    wrote just as the payload is. The bytecode record holds exactly these lines.
    """
    lines, problem = bytecode_lines(runtime_dir)
    return (payload_sha256(lines) if lines else ""), problem


def tree_payload(runtime_dir: Path) -> tuple[str, int, int, str | None]:
    """(payload_sha256, file count, bytes, problem) recomputed from a runtime's files."""
    lines: list[bytes] = []
    total = 0
    for rel, full, info in _walk(runtime_dir):
        if stat.S_ISDIR(info.st_mode):
            continue
        if not stat.S_ISREG(info.st_mode):
            return "", 0, 0, f"{full} is not a regular file"
        if rel == MANIFEST_NAME:
            continue
        digest = file_sha256(full)
        lines.append(hash_line(digest, file_mode_tag(info.st_mode), rel))
        total += info.st_size
    return payload_sha256(lines), len(lines), total, None


def _aside(runtime_dir: Path) -> str:
    return f"move {runtime_dir} out of versions/ (keep it) and run `lean-beam install` again"


def structural_problem(runtime_dir: Path) -> str | None:
    """Marker, manifest and id of `versions/<id>`; a reason naming what is wrong, or None."""
    if runtime_dir.is_symlink() or not runtime_dir.is_dir():
        return f"{runtime_dir} is not a real directory; {_aside(runtime_dir)}"
    cheap = identity.runtime_error(str(runtime_dir))
    if cheap is not None:
        return cheap
    try:
        load_manifest(runtime_dir)
    except (OSError, ValueError) as exc:
        detail = str(exc).splitlines()[0]
        return f"manifest of {runtime_dir} is invalid ({detail}); {_aside(runtime_dir)}"
    return None


def full_problem(runtime_dir: Path) -> str | None:
    """Everything `structural_problem` checks plus files, launchers and the payload hash."""
    problem = structural_problem(runtime_dir)
    if problem is not None:
        return problem
    manifest = load_manifest(runtime_dir)
    for command in COMMANDS:
        launcher = launcher_path(runtime_dir, command)
        if launcher.is_symlink() or not launcher.is_file() or not os.access(launcher, os.X_OK):
            return f"launcher {launcher} is missing or not executable; {_aside(runtime_dir)}"
    digest, count, size, bad = tree_payload(runtime_dir)
    if bad is not None:
        return f"{bad}; {_aside(runtime_dir)}"
    if (digest, count, size) != (manifest.payload_sha256, manifest.files, manifest.bytes):
        return (
            f"the files of {runtime_dir} do not match its manifest's payload hash; "
            f"{_aside(runtime_dir)}"
        )
    return _bytecode_problem(runtime_dir, manifest)


def _bytecode_problem(runtime_dir: Path, manifest: ManifestRecord) -> str | None:
    lines, bad = bytecode_lines(runtime_dir)
    if bad is not None:
        return f"{bad}; {_aside(runtime_dir)}"
    if (payload_sha256(lines) if lines else "") != manifest.bytecode_sha256:
        return (
            f"the bytecode of {runtime_dir} (__pycache__) is not what was installed; "
            f"{_aside(runtime_dir)}"
        )
    return _record_problem(runtime_dir, b"".join(lines))


def _record_problem(runtime_dir: Path, expected: bytes) -> str | None:
    """The bytecode record: required by a runtime whose launchers go through the import gate
    (it ships `beam_runtime/bytecode_gate.py`), and then exactly the recomputed lines."""
    record = runtime_dir / RECORD
    own = record.parent
    if not os.path.lexists(runtime_dir / GATE) and not os.path.lexists(own):
        return None  # installed before the gate: its launchers never read a record
    try:
        names = os.listdir(own)
        info = os.lstat(record)
        data = record.read_bytes() if stat.S_ISREG(info.st_mode) else None
    except OSError as exc:
        return f"cannot read the bytecode record {record} ({exc.strerror}); {_aside(runtime_dir)}"
    if names != [record.name] or data != expected:
        return f"the bytecode record {record} is not the one install wrote; {_aside(runtime_dir)}"
    return None
