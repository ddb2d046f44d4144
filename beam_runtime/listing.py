"""`lean-beam runtime list`: every runtime of an install root and what holds on to it.

Shared with prune and doctor: `scan_runtimes` reads `versions/` once (structural validation, no
hashing), `current_runtime_id` reads the `current` link.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from beam_runtime.install_root import InstallRoot
from beam_runtime.layout import versions_dir

if TYPE_CHECKING:
    from beam_runtime.leases import Holder
    from beam_runtime.record_check import ManifestRecord
    from beam_runtime.references import Reference, ReferenceIndex


@dataclass
class RuntimeEntry:
    """One entry of `versions/`: a valid runtime (manifest set) or an invalid one (reason set)."""

    name: str
    path: Path
    manifest: ManifestRecord | None
    invalid: str | None
    inode: tuple[int, int] | None  # (st_dev, st_ino) of the entry itself, to notice swaps
    current: bool = False
    active: bool = False  # a live process other than the asking one holds the lease
    active_pids: list[Holder] = field(default_factory=list)
    referenced_by: list[Reference] = field(default_factory=list)

    @property
    def created_at(self) -> str | None:
        return self.manifest.created_at if self.manifest else None

    def holders(self) -> list[str]:
        """Why this runtime must stay, in words."""
        reasons = ["current"] if self.current else []
        if self.active:
            pids = ", ".join(str(h.pid) for h in self.active_pids)
            reasons.append(f"active (pid {pids})" if pids else "active")
        reasons += [f"referenced by {ref.describe()}" for ref in self.referenced_by]
        return reasons

    def to_json(self) -> dict[str, Any]:
        manifest = self.manifest
        return {
            "id": self.name,
            "version": manifest.version if manifest else None,
            "created_at": manifest.created_at if manifest else None,
            "bytes": manifest.bytes if manifest else None,
            "current": self.current,
            "active": self.active,
            "active_pids": [holder.to_json() for holder in self.active_pids],
            "referenced_by": [ref.to_json() for ref in self.referenced_by],
            "invalid": self.invalid,
        }


def current_runtime_id(root: Path) -> str | None:
    """The id `<root>/current` names, when `versions/<id>` is a real directory."""
    return InstallRoot(root).current_runtime()


def inspect_entry(path: Path, marker_ok: bool | None = None) -> RuntimeEntry:
    """Structural validation of one `versions/` entry (no hashing).

    Fast path: with the root's marker known to be sound, a real directory whose manifest
    validates and names this id is exactly what `record_check.structural_problem` accepts, so the
    manifest is parsed once; anything else gets `structural_problem`'s own reason.
    """
    from beam_runtime.install_root import marker_problem
    from beam_runtime.record_check import load_manifest, structural_problem

    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return RuntimeEntry(path.name, path, None, f"{path} vanished", None)
    inode = (info.st_dev, info.st_ino)
    if marker_ok is None:
        marker_ok = marker_problem(str(path.parent.parent)) is None
    if marker_ok and stat.S_ISDIR(info.st_mode):
        try:
            manifest = load_manifest(path)
        except (OSError, ValueError):
            manifest = None
        if manifest is not None and manifest.runtime_id == path.name:
            return RuntimeEntry(path.name, path, manifest, None, inode)
    problem = structural_problem(path) or f"{path} changed while it was being read"
    return RuntimeEntry(path.name, path, None, problem, inode)


def scan_runtimes(root: Path) -> list[RuntimeEntry]:
    """Every entry of `<root>/versions`, newest valid runtime first, then the invalid ones."""
    versions = versions_dir(root)
    reader = InstallRoot(root)
    names = reader.runtime_names()
    if not names:
        return []
    marker_ok = reader.marker_problem() is None
    entries = [inspect_entry(versions / name, marker_ok) for name in names]
    valid = sorted(
        (e for e in entries if e.manifest), key=lambda e: (e.created_at or "", e.name), reverse=True
    )
    return valid + [e for e in entries if e.manifest is None]


def annotate(
    root: Path, entries: list[RuntimeEntry], references: ReferenceIndex
) -> list[RuntimeEntry]:
    """Fill in `current`, `active` (never counting this process) and `referenced_by`."""
    from beam_runtime.leases import all_lease_holders

    current = current_runtime_id(root)
    holders = all_lease_holders(root, [entry.name for entry in entries])
    for entry in entries:
        entry.current = entry.name == current
        entry.active_pids = holders.get(entry.name, [])
        entry.active = bool(entry.active_pids)
        entry.referenced_by = references.referenced_by(entry.name)
    return entries


@dataclass
class RuntimeListing:
    install_root: Path
    current: str | None
    runtimes: list[RuntimeEntry]

    def to_json(self) -> dict[str, Any]:
        return {
            "install_root": str(self.install_root),
            "current": self.current,
            "runtimes": [entry.to_json() for entry in self.runtimes],
        }

    def to_text(self) -> str:
        lines = [f"install root: {self.install_root}", f"current: {self.current or 'none'}"]
        if not self.runtimes:
            lines.append("no runtimes installed; run `lean-beam install`")
        for entry in self.runtimes:
            lines.append(_text_line(entry))
        return "\n".join(lines)


def human_bytes(count: int) -> str:
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{count} B"


def _text_line(entry: RuntimeEntry) -> str:
    if entry.manifest is None:
        return f"  {entry.name}  invalid: {entry.invalid}"
    flags = ", ".join(entry.holders()) or "unused"
    manifest = entry.manifest
    return (
        f"  {entry.name}  {manifest.version}  {manifest.created_at}  "
        f"{human_bytes(manifest.bytes)}  {flags}"
    )


def list_runtimes(root: Path, env: Mapping[str, str] | None = None) -> RuntimeListing:
    from beam_runtime.references import ReferenceIndex

    entries = scan_runtimes(root)
    annotate(root, entries, ReferenceIndex.scan(root, env))
    return RuntimeListing(root, current_runtime_id(root), entries)
