"""The on-disk records of an install root (schema of record) and runtime validation.

`Marker` is `<root>/.lean-beam-install-root`, `Manifest` is `versions/<id>/manifest.json`
(runtime.md "Manifest", decisions 1 and 4). Two validations of a runtime directory:

- `structural_problem`: marker, manifest and id; cheap. Used by `runtime list` and prune.
- `full_problem`: structural, plus every entry a regular file or a real directory, launchers
  executable and the recomputed payload hash equal to the manifest's. Required before reuse.

Both return a one-line reason, or None when the runtime is sound.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from beam_runtime import identity
from beam_runtime.layout import COMMANDS, MANIFEST_NAME, launcher_path

MARKER_OWNER = "lean-beam"
CreatedBy = Literal["pipx", "uv", "nix", "venv", "unknown"]


class Marker(BaseModel):
    """Ownership marker of an install root; unknown keys are ignored."""

    model_config = ConfigDict(extra="ignore")

    owner: Literal["lean-beam"]
    schema_: int = Field(alias="schema", ge=1)
    root: str

    def to_json(self) -> dict[str, object]:
        return {"owner": self.owner, "schema": self.schema_, "root": self.root}


class PythonInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    executable: str
    version: str
    abi: str
    implementation: str
    platform: str


class Manifest(BaseModel):
    """`versions/<id>/manifest.json`, schema 1."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal[1] = Field(alias="schema")
    runtime_id: str
    version: str
    payload_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    files: int = Field(ge=0)
    bytes: int = Field(ge=0)
    python: PythonInfo
    entry_points: dict[str, str]
    created_at: str = Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
    created_by: CreatedBy

    def to_json(self) -> dict[str, object]:
        return self.model_dump(by_alias=True)


def file_mode_tag(mode: int) -> str:
    """`755` for a file with any execute bit, else `644` (modes are normalized, decision 2)."""
    return "755" if mode & 0o111 else "644"


def hash_line(digest: str, mode_tag: str, relpath: str) -> bytes:
    return f"{digest}  {mode_tag}  {relpath}\n".encode()


def payload_sha256(lines: Iterable[bytes]) -> str:
    """sha256 over the hash lines sorted by their UTF-8 bytes (decision 1)."""
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


def _walk(runtime_dir: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry below `runtime_dir` except bytecode caches, as (posix relpath, lstat)."""
    for current, dirnames, filenames in os.walk(runtime_dir):
        dirnames[:] = [name for name in dirnames if name != "__pycache__"]
        base = os.path.relpath(current, runtime_dir)
        for name in sorted(dirnames + filenames):
            full = os.path.join(current, name)
            rel = name if base == "." else f"{base}/{name}"
            yield rel.replace(os.sep, "/"), os.lstat(full)


def tree_payload(runtime_dir: Path) -> tuple[str, int, int, str | None]:
    """(payload_sha256, file count, bytes, problem) recomputed from a runtime's files."""
    lines: list[bytes] = []
    total = 0
    for rel, info in _walk(runtime_dir):
        if stat.S_ISDIR(info.st_mode):
            continue
        if not stat.S_ISREG(info.st_mode):
            return "", 0, 0, f"{runtime_dir / rel} is not a regular file"
        if rel == MANIFEST_NAME:
            continue
        digest = file_sha256(runtime_dir / rel)
        lines.append(hash_line(digest, file_mode_tag(info.st_mode), rel))
        total += info.st_size
    return payload_sha256(lines), len(lines), total, None


def load_marker(root: Path) -> Marker:
    """Parse the marker (raises OSError, ValueError or ValidationError)."""
    return Marker.model_validate_json((root / ".lean-beam-install-root").read_bytes())


def load_manifest(runtime_dir: Path) -> Manifest:
    """Parse a manifest (raises OSError, ValueError or ValidationError)."""
    return Manifest.model_validate_json((runtime_dir / MANIFEST_NAME).read_bytes())


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
    except (OSError, ValueError, ValidationError) as exc:
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
    return None
