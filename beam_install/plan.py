"""What setup and remove plan for one file, and the result both commands report.

`read_config` refuses a config that is a directory, cannot be read (or not within the read
bound: a hung mount), is read-only or does not parse (nested too deeply included), before
anything is written. `Change` and `SkillChange` are the rows of `changes` and
`skills`; `SetupResult` renders them for people and for `--json`.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, cast

from beam_install.clients.formats import MARKER_KEY, MARKER_VALUE, Format
from beam_install.journal import Current, FileWrite, Recovery, planned_write, read_current_now
from beam_runtime.errors import BeamError

T = TypeVar("T")


@dataclass
class Config:
    """A client config as found: its text (None when absent), parsed document and mode, and
    the identity of the file read (a write happens only while it is still that file)."""

    path: Path
    text: str | None
    doc: Any
    mode: int | None
    current: Current | None = None
    new_dirs: list[str] = field(default_factory=list)  # ancestors missing when it was read


def _refuse(category: str, message: str, fix: str, path: Path) -> BeamError:
    return BeamError(category, message, fix, {"file": str(path)})


def bounded(fn: Callable[[], T], path: Path) -> T:
    """`fn()`, which touches `path`, in a reader process the command can abandon
    (`beam_runtime.isolated`): a file system that does not answer (a hung mount) is
    `configUnreadable`, "could not read X within N s"; what `fn` raises is raised here."""
    from beam_runtime import isolated

    (outcome,) = isolated.run_tasks([fn])
    if isinstance(outcome, isolated.Hung):
        raise _refuse(
            "configUnreadable",
            f"could not read {path} within {outcome.seconds:g} s (a hung mount?); "
            "nothing was written",
            f"make {path} readable again (check the mount it is on), or leave its client "
            "out of the command",
            path,
        )
    if isinstance(outcome, BaseException):
        raise outcome
    return cast(T, outcome)


def _load(path: Path) -> tuple[Current, list[str]]:
    target = Path(os.path.realpath(path))
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    current = read_current_now(target)
    return current, missing_dirs(target) if current.text is None else []


def read_config(path: Path, fmt: Format) -> Config:
    """Read and parse `path` (following a symlink, bounded); BeamError when it must not be
    touched."""
    try:
        current, new_dirs = bounded(partial(_load, path), path)
    except IsADirectoryError:
        raise _refuse(
            "configNotAFile",
            f"{path} is a directory, not a config file",
            f"move {path} aside, then retry",
            path,
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _refuse(
            "configUnreadable",
            f"cannot read {path}: {exc}",
            f"make {path} a readable UTF-8 file (or move it aside), then retry",
            path,
        ) from None
    doc = parse_config(fmt, current.text or "", path)
    return Config(path, current.text, doc, current.mode, current, new_dirs)


def parse_config(fmt: Format, text: str, path: Path) -> Any:
    """`fmt.parse(text)`; configInvalid when it does not parse (or nests too deeply)."""
    try:
        return fmt.parse(text)
    except RecursionError:
        detail = "nested too deeply"
    except ValueError as exc:  # JSONDecodeError and tomlkit's ParseError included
        detail = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
    raise _refuse(
        "configInvalid",
        f"{path} does not parse ({detail}); it was left untouched",
        f"fix the syntax of {path} (the client would reject it too), then retry",
        path,
    )


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
    """Ancestors of `path` that do not exist yet, outermost first (may touch a slow mount:
    `read_config` calls it in its bounded thread)."""
    found = []
    parent = Path(os.path.realpath(path)).parent
    while not os.path.lexists(parent):
        found.append(str(parent))
        parent = parent.parent
    return list(reversed(found))


def file_write(config: Config, new: str | None) -> FileWrite:
    if config.current is None:
        return FileWrite(config.path, config.text, new, config.mode, list(config.new_dirs))
    return planned_write(config.current, config.path, new, list(config.new_dirs))


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
