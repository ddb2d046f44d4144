"""What setup and remove plan for one file, and the result both commands report.

`read_config` refuses a config that is a directory, cannot be read, is read-only or does not
parse, before anything is written. `Change` and `SkillChange` are the rows of `changes` and
`skills`; `SetupResult` renders them for people and for `--json`.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from beam_install.clients.formats import MARKER_KEY, MARKER_VALUE, Format
from beam_install.journal import FileWrite, Recovery
from beam_runtime import safe_read
from beam_runtime.errors import BeamError


@dataclass
class Config:
    """A client config as found: its text (None when absent), parsed document and mode."""

    path: Path
    text: str | None
    doc: Any
    mode: int | None


def _refuse(category: str, message: str, fix: str, path: Path) -> BeamError:
    return BeamError(category, message, fix, {"file": str(path)})


def read_config(path: Path, fmt: Format) -> Config:
    """Read and parse `path` (following a symlink); BeamError when it must not be touched."""
    target = Path(os.path.realpath(path))
    if os.path.isdir(target):
        raise _refuse(
            "configNotAFile",
            f"{path} is a directory, not a config file",
            f"move {path} aside, then retry",
            path,
        )
    try:
        text: str | None = safe_read.read_text_bounded(str(target), safe_read.CONFIG_CAP)
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        text, mode = None, None
    except (OSError, UnicodeDecodeError) as exc:
        raise _refuse(
            "configUnreadable",
            f"cannot read {path}: {exc}",
            f"make {path} a readable UTF-8 file (or move it aside), then retry",
            path,
        ) from None
    try:
        doc = fmt.parse(text or "")
    except ValueError as exc:  # JSONDecodeError and tomlkit's ParseError included
        detail = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        raise _refuse(
            "configInvalid",
            f"{path} does not parse ({detail}); it was left untouched",
            f"fix the syntax of {path} (the client would reject it too), then retry",
            path,
        ) from None
    return Config(path, text, doc, mode)


def check_writable(config: Config) -> None:
    if config.mode is not None and not config.mode & 0o222:
        raise _refuse(
            "configReadOnly",
            f"{config.path} is read-only (mode {config.mode:o}); it was left untouched",
            f"make it writable (chmod u+w {config.path}) if lean-beam may edit it",
            config.path,
        )


def is_ours(fmt: Format, entry: dict[str, Any] | None, wrapper: Path, root: Path) -> bool:
    """Ours: it carries the marker, or it runs this root's wrapper or one of its runtimes."""
    if not entry:
        return False
    if fmt.env_of(entry).get(MARKER_KEY) == MARKER_VALUE:
        return True
    argv = fmt.command_of(entry)
    if not argv:
        return False
    command = os.path.realpath(os.path.expanduser(argv[0]))
    versions = os.path.realpath(root / "versions") + os.sep
    return command == os.path.realpath(wrapper) or command.startswith(versions)


def missing_dirs(path: Path) -> list[str]:
    """Ancestors of `path` that do not exist yet, outermost first."""
    found = []
    parent = Path(os.path.realpath(path)).parent
    while not os.path.lexists(parent):
        found.append(str(parent))
        parent = parent.parent
    return list(reversed(found))


def file_write(config: Config, new: str | None) -> FileWrite:
    return FileWrite(config.path, config.text, new, config.mode, missing_dirs(config.path))


@dataclass
class Change:
    """One row of `changes`: a client entry in one file."""

    client: str
    scope: str
    file: Path
    action: str  # created | updated | unchanged | removed | skipped
    reason: str | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    write: FileWrite | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "client": self.client,
            "scope": self.scope,
            "file": str(self.file),
            "action": self.action,
        }
        if self.reason:
            body["reason"] = self.reason
        return body


@dataclass
class SkillChange:
    host: str  # claude-code | agents
    file: Path
    action: str
    reason: str | None = None
    write: FileWrite | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"host": self.host, "file": str(self.file), "action": self.action}
        if self.reason:
            body["reason"] = self.reason
        return body


_WOULD = {"created": "would create", "updated": "would update", "removed": "would remove"}


def _compact(entry: dict[str, Any] | None) -> str:
    return "(none)" if entry is None else json.dumps(entry, ensure_ascii=False)


@dataclass
class SetupResult:
    """What setup, remove or uninstall did, or (dry run) would do."""

    operation: str
    dry_run: bool
    changes: list[Change] = field(default_factory=list)
    skills: list[SkillChange] = field(default_factory=list)
    recovered: Recovery | None = None
    notes: list[str] = field(default_factory=list)
    extra_writes: list[FileWrite] = field(default_factory=list)  # the record, not reported

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "dry_run": self.dry_run,
            "changes": [c.to_json() for c in self.changes],
            "skills": [s.to_json() for s in self.skills],
        }
        if self.recovered is not None:
            body["recovered"] = self.recovered.to_json()
        return body

    def _action(self, action: str) -> str:
        return _WOULD.get(action, action) if self.dry_run else action

    def to_text(self) -> str:
        head = f"lean-beam {self.operation}"
        if self.dry_run:
            head += " (plan only, nothing written; add --yes to apply)"
        lines = [head]
        if self.recovered is not None:
            lines.append(self.recovered.to_text())
        if not self.changes:
            lines.append("  no client selected or registered")
        for change in self.changes:
            why = f": {change.reason}" if change.reason else ""
            lines.append(
                f"  {change.client} ({change.scope}) {change.file}: "
                f"{self._action(change.action)}{why}"
            )
            if self.dry_run and change.action in ("created", "updated", "removed"):
                lines.append(f"      before: {_compact(change.before)}")
                lines.append(f"      after:  {_compact(change.after)}")
        for skill in self.skills:
            why = f": {skill.reason}" if skill.reason else ""
            lines.append(f"  skill ({skill.host}) {skill.file}: {self._action(skill.action)}{why}")
        lines += self.notes
        return "\n".join(lines)

    def writes(self) -> list[FileWrite]:
        rows: list[Change | SkillChange] = [*self.changes, *self.skills]
        return [row.write for row in rows if row.write is not None]
