"""`lean-beam setup`: register `<root>/bin/lean-beam-mcp` with MCP clients, as one transaction.

The plan reads every selected config first and refuses the whole run when one is unusable
(`plan.read_config`); nothing is written without `--yes`. Entries are ours when they carry
`LEAN_BEAM_MANAGED=1` (or run this root's wrapper or runtimes); an entry of the same name that
is not ours is reported and left alone unless `--force-unmanaged`. `--refresh` rewrites only
entries that are ours and adds none. The skill for the selected hosts, and the record of what
was registered, change in the same transaction (`journal.commit`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from beam_install import record
from beam_install.clients import CLIENTS, config_path, detect, format_for, skill_host
from beam_install.journal import (
    FileWrite,
    commit,
    failpoint,
    journal_path,
    recover,
    setup_lock,
)
from beam_install.plan import (
    Change,
    SetupResult,
    SkillChange,
    check_writable,
    file_write,
    is_ours,
    missing_dirs,
    read_config,
)
from beam_install.skill import SKILL_TEXT, skill_path
from beam_install.skill import is_ours as skill_is_ours
from beam_runtime import safe_read
from beam_runtime.errors import BeamError
from beam_runtime.layout import bin_dir

ACTIVE = ("created", "updated", "unchanged")


@dataclass(frozen=True)
class SetupRequest:
    clients: list[str]  # as named on the command line
    all_clients: bool = False
    scope: str = "user"
    project: Path | None = None
    refresh: bool = False
    force_unmanaged: bool = False


def installed_root(explicit: str | None) -> Path:
    """The install root, which must hold an installed `bin/lean-beam-mcp`."""
    from beam_install.root import inspect_root
    from beam_runtime.layout import resolve_install_root

    root = resolve_install_root(explicit)
    wrapper = bin_dir(root) / "lean-beam-mcp"
    if not inspect_root(root) or not os.access(wrapper, os.X_OK):
        raise BeamError(
            "notInstalled",
            f"lean-beam is not installed in {root} ({wrapper} is missing)",
            "run `lean-beam install` first (or pass the --install-root you installed into)",
            {"install_root": str(root)},
        )
    return root


def select_clients(request: SetupRequest, env: Mapping[str, str]) -> tuple[list[str], bool]:
    """(clients, named): every client, the named ones, or the detected ones."""
    if request.all_clients:
        return list(CLIENTS), True
    if request.clients:
        return list(dict.fromkeys(request.clients)), True
    if request.refresh:
        return list(CLIENTS), False
    found = detect(env)
    if not found:
        raise BeamError(
            "noClientSelected",
            "no MCP client was named and none was found on this machine",
            f"name the clients (one or more of: {', '.join(CLIENTS)}) or pass --all",
        )
    return found, False


def _verify(fmt: Any, text: str, expected: dict[str, Any], path: Path) -> None:
    """Parse what we are about to write: it must hold exactly the planned entry."""
    try:
        found = fmt.entry(fmt.parse(text))
    except ValueError as exc:
        found = {"unparsable": str(exc)}
    if found != expected:
        raise BeamError(
            "internalError",
            f"the new text planned for {path} does not read back as planned; nothing written",
            "report this with the file attached (remove secrets first)",
            {"file": str(path)},
        )


def plan_entry(
    client: str, scope: str, path: Path, root: Path, request: SetupRequest, named: bool
) -> tuple[Change | None, bool]:
    """One client's row, and whether its file did not exist before."""
    fmt = format_for(client, path)
    config = read_config(path, fmt)
    wrapper = bin_dir(root) / "lean-beam-mcp"
    command = str(wrapper)
    entry = fmt.entry(config.doc)
    change = Change(client, scope, path, "unchanged", before=entry)
    if entry is None:
        if request.refresh:
            if not named:
                return None, False
            change.action, change.reason = "skipped", "no lean-beam entry (--refresh adds none)"
            return change, False
        change.action, change.after = "created", fmt.desired(command)
    elif is_ours(fmt, entry, wrapper, root):
        change.after = fmt.merged(entry, command)
        change.action = "unchanged" if change.after == entry else "updated"
    elif request.force_unmanaged:
        change.action, change.after = "updated", fmt.desired(command)
        change.reason = "replaced an entry lean-beam did not manage (--force-unmanaged)"
    else:
        runs = " ".join(fmt.command_of(entry)) or "an unknown command"
        change.action = "skipped"
        change.reason = (
            f"an entry `lean-beam` lean-beam does not manage (it runs {runs}) is "
            "left alone; review it, then --force-unmanaged replaces it"
        )
    if change.action in ("created", "updated") and change.after is not None:
        check_writable(config)
        text = fmt.with_entry(config.text or "", change.after)
        _verify(fmt, text, change.after, path)
        change.write = file_write(config, text)
    return change, config.text is None


def plan_skills(hosts: set[str], env: Mapping[str, str], refresh: bool) -> list[SkillChange]:
    rows = []
    for host in sorted(hosts):
        row = _plan_skill(host, skill_path(host, env), refresh)
        if row is not None:
            rows.append(row)
    return rows


def read_skill(path: Path) -> str | None:
    if os.path.isdir(path):
        raise BeamError(
            "configNotAFile",
            f"{path} is a directory, not a skill file",
            f"move {path} aside, then retry",
            {"file": str(path)},
        )
    try:
        return safe_read.read_text_bounded(str(path), safe_read.CONFIG_CAP)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise BeamError(
            "configUnreadable",
            f"cannot read {path}: {exc}",
            f"make {path} readable or move it aside, then retry",
            {"file": str(path)},
        ) from None


def _plan_skill(host: str, path: Path, refresh: bool) -> SkillChange | None:
    old = read_skill(path)
    if old is None:
        if refresh:
            return None
        write = FileWrite(path, None, SKILL_TEXT, 0o644, missing_dirs(path))
        return SkillChange(host, path, "created", write=write)
    if not skill_is_ours(old):
        return SkillChange(host, path, "skipped", "exists and is not managed by lean-beam; kept")
    if old == SKILL_TEXT:
        return SkillChange(host, path, "unchanged")
    mode = os.stat(path).st_mode & 0o777
    return SkillChange(host, path, "updated", write=FileWrite(path, old, SKILL_TEXT, mode))


def plan_setup(root: Path, request: SetupRequest, env: Mapping[str, str], cwd: Path) -> SetupResult:
    """Everything setup would change, read from the files as they are now."""
    clients, named = select_clients(request, env)
    project = (request.project or cwd).resolve()
    result = SetupResult("setup", True)
    registrations = record.load(root)
    known = {record.key(r.client, r.file): r for r in registrations}
    for client in clients:
        path = config_path(client, request.scope, env, project)
        change, fresh = plan_entry(client, request.scope, path, root, request, named)
        if change is None:
            continue
        result.changes.append(change)
        if change.action in ACTIVE:
            old = known.get(record.key(client, path))
            created = fresh or bool(old and old.created_file)
            registrations.append(record.Registration(client, request.scope, str(path), created))
    hosts = {skill_host(c.client) for c in result.changes if c.action in ACTIVE}
    result.skills = plan_skills(hosts, env, request.refresh)
    if result.writes():
        result.extra_writes.append(record.write(root, registrations))
    return result


def _finish(result: SetupResult) -> None:
    if any(c.action in ("created", "updated") for c in result.changes):
        result.notes.append("restart the MCP clients (agents) so they load the new entries")
    skipped = [c for c in result.changes if c.action == "skipped" and "force" in (c.reason or "")]
    if skipped:
        result.notes.append("entries marked skipped were left exactly as they are")


def run_setup(
    explicit_root: str | None,
    request: SetupRequest,
    *,
    apply: bool,
    env: Mapping[str, str],
    cwd: Path,
    lock_timeout: float,
) -> SetupResult:
    root = installed_root(explicit_root)
    if not apply:
        result = plan_setup(root, request, env, cwd)
        if os.path.lexists(journal_path(root)):
            result.notes.append("an interrupted setup will be rolled back first when applied")
        _finish(result)
        return result
    with setup_lock(root, lock_timeout):
        failpoint("locked")
        recovered = recover(root)
        result = plan_setup(root, request, env, cwd)
        commit(root, "setup", [*result.writes(), *result.extra_writes])
    result.dry_run = False
    result.recovered = recovered
    _finish(result)
    return result
