"""`lean-beam remove`: delete our entries and skills from client configs, as one transaction.

Targets are each selected client's user config plus every file setup recorded for it (project
scopes included). Only entries that are ours go; an entry of the same name that is not ours is
reported and kept. A config file setup created is deleted when nothing but empty tables remain.
A skill goes when no remaining registration of its host family needs it, and only when ours.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

from beam_install import record
from beam_install.clients import CLIENTS, format_for, skill_host
from beam_install.journal import FileWrite, commit, failpoint, recover, setup_lock
from beam_install.plan import (
    Change,
    SetupResult,
    SkillChange,
    check_writable,
    file_write,
    read_config,
)
from beam_install.plan import is_ours as entry_is_ours
from beam_install.setup import read_skill
from beam_install.skill import is_ours as skill_is_ours
from beam_install.skill import skill_path
from beam_runtime.errors import BeamError
from beam_runtime.layout import bin_dir
from beam_runtime.references import user_config


def _is_empty(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_is_empty(v) for v in value.values())
    if isinstance(value, list):
        return not value
    return False


def _targets(
    selected: list[str], registrations: list[record.Registration], env: Mapping[str, str]
) -> list[tuple[str, str, Path, bool]]:
    rows: dict[tuple[str, str], tuple[str, str, Path, bool]] = {}
    for client in selected:
        path = user_config(client, env)
        rows[record.key(client, path)] = (client, "user", path, False)
    for reg in registrations:
        if reg.client in selected:
            rows[record.key(reg.client, reg.file)] = (
                reg.client,
                reg.scope,
                Path(reg.file),
                reg.created_file,
            )
    return list(rows.values())


def _plan_file(client: str, scope: str, path: Path, created: bool, root: Path) -> Change:
    fmt = format_for(client, path)
    if not os.path.lexists(path) and not os.path.lexists(os.path.realpath(path)):
        return Change(client, scope, path, "unchanged", "no lean-beam entry")
    config = read_config(path, fmt)
    entry = fmt.entry(config.doc)
    if entry is None:
        return Change(client, scope, path, "unchanged", "no lean-beam entry")
    if not entry_is_ours(fmt, entry, bin_dir(root) / "lean-beam-mcp", root):
        return Change(
            client,
            scope,
            path,
            "skipped",
            "its `lean-beam` entry is not managed by lean-beam; left alone",
            entry,
        )
    check_writable(config)
    text: str | None = fmt.without_entry(config.text or "")
    if created and text is not None and _is_empty(fmt.parse(text)):
        text = None  # setup created this file for our entry alone
    change = Change(client, scope, path, "removed", before=entry)
    change.write = file_write(config, text)
    return change


def _plan_skill(host: str, env: Mapping[str, str]) -> SkillChange | None:
    path = skill_path(host, env)
    old = read_skill(path)
    if old is None:
        return None
    if not skill_is_ours(old):
        return SkillChange(host, path, "skipped", "not managed by lean-beam; kept")
    mode = os.stat(path).st_mode & 0o777
    return SkillChange(host, path, "removed", write=FileWrite(path, old, None, mode))


def plan_remove(
    root: Path,
    clients: list[str],
    all_clients: bool,
    env: Mapping[str, str],
    operation: str = "remove",
) -> SetupResult:
    selected = list(CLIENTS) if all_clients else list(dict.fromkeys(clients))
    if not selected:
        raise BeamError(
            "noClientSelected",
            "no MCP client was named",
            f"name the clients (one or more of: {', '.join(CLIENTS)}) or pass --all",
        )
    registrations = record.load(root)
    result = SetupResult(operation, True)
    gone: set[tuple[str, str]] = set()
    for client, scope, path, created in _targets(selected, registrations, env):
        change = _plan_file(client, scope, path, created, root)
        result.changes.append(change)
        if change.action != "skipped":
            gone.add(record.key(client, path))
    remaining = [r for r in registrations if record.key(r.client, r.file) not in gone]
    still = {skill_host(r.client) for r in remaining}
    for host in sorted({skill_host(c) for c in selected} - still):
        row = _plan_skill(host, env)
        if row is not None:
            result.skills.append(row)
    result.extra_writes.append(record.write(root, remaining))
    return result


def _tidy(result: SetupResult) -> None:
    """Drop directories that deleting a skill or a setup-created file left empty (best effort)."""
    rows: list[Change | SkillChange] = [*result.changes, *result.skills]
    for row in rows:
        if row.write is not None and row.write.new is None:
            with suppress(OSError):
                os.rmdir(row.write.target.parent)


def run_remove(
    root: Path,
    clients: list[str],
    all_clients: bool,
    *,
    apply: bool,
    env: Mapping[str, str],
    lock_timeout: float,
    operation: str = "remove",
) -> SetupResult:
    if not apply:
        return plan_remove(root, clients, all_clients, env, operation)
    with setup_lock(root, lock_timeout):
        failpoint("locked")
        recovered = recover(root)
        result = plan_remove(root, clients, all_clients, env, operation)
        commit(root, operation, [*result.writes(), *result.extra_writes])
    result.dry_run = False
    result.recovered = recovered
    _tidy(result)
    if any(c.action == "removed" for c in result.changes):
        result.notes.append("restart the MCP clients (agents) so they drop lean-beam")
    return result
