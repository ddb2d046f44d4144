"""`lean-beam remove`: delete our entries and skills from client configs, as one transaction.

Targets are each selected client's user config plus every file setup recorded for it (project
scopes included). Only entries that are ours go; an entry of the same name that is not ours is
reported and kept. Where setup added the entry, remove takes out exactly the text setup put in
(its record's splice), so the file comes back byte for byte, with the servers table or object
setup created for it; where that text is no longer there as written (the client reformatted its
file), the entry is removed structurally and the servers table or object goes too when setup
created it and nothing is left in it. A file setup created is deleted when nothing else is left
in it, and then the directories setup created for it, while empty; a directory that existed
before setup is never deleted. A skill goes when no remaining registration of its host family
needs it, and only when ours (with the directories setup created for it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from beam_install import record
from beam_install.clients import CLIENTS, config_path_spelled, format_for, skill_host
from beam_install.clients.formats import Format
from beam_install.clients.splice import undo
from beam_install.journal import failpoint, planned_write, recover, setup_lock
from beam_install.plan import (
    Change,
    SetupResult,
    SkillChange,
    bounded,
    check_writable,
    file_write,
    read_config,
)
from beam_install.plan import is_ours as entry_is_ours
from beam_install.setup import apply_planned, edited, read_skill
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


def _plain(doc: Any) -> Any:
    return doc.unwrap() if hasattr(doc, "unwrap") else doc


def _targets(
    selected: list[str], registrations: list[record.Registration], env: Mapping[str, str]
) -> list[tuple[str, str, Path, record.Registration | None]]:
    rows: dict[tuple[str, str], tuple[str, str, Path, record.Registration | None]] = {}
    for client in selected:
        spelled = config_path_spelled(client, "user", env, Path(os.sep))
        path = bounded(partial(user_config, client, env), spelled)
        rows[record.key(client, path)] = (client, "user", path, None)
    for reg in registrations:
        if reg.client in selected:
            rows[record.key(reg.client, reg.file)] = (reg.client, reg.scope, Path(reg.file), reg)
    return list(rows.values())


def removal_text(fmt: Format, text: str, reg: record.Registration | None, path: Path) -> str | None:
    """`text` without our entry (None: delete the file), undoing setup byte for byte when it
    can: the recorded splice, checked against the structural removal."""
    structural = edited(path, lambda: fmt.without_entry(text))
    if reg is not None and reg.created_container:
        structural = edited(path, lambda: fmt.without_container(structural))
    created = reg is not None and reg.created_file
    if reg is not None and reg.splice is not None:
        undone = undo(text, reg.splice)
        if undone is not None and _same(fmt, undone, structural):
            return None if created and not undone.strip() else undone
    if created and _is_empty(fmt.parse(structural)):
        return None  # setup created this file for our entry alone
    return structural


def _same(fmt: Format, one: str, other: str) -> bool:
    try:
        return bool(_plain(fmt.parse(one)) == _plain(fmt.parse(other)))
    except (ValueError, RecursionError):
        return False


def _plan_file(
    client: str, scope: str, path: Path, reg: record.Registration | None, root: Path
) -> Change:
    fmt = format_for(client, path)
    config = read_config(path, fmt)
    if config.text is None:
        return Change(client, scope, path, "unchanged", "no lean-beam entry")
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
    text = removal_text(fmt, config.text, reg, path)
    change = Change(client, scope, path, "removed", before=entry)
    change.write = file_write(config, text)
    if text is None and reg is not None:
        change.write.drop_dirs = list(reg.created_dirs)
    return change


def _plan_skill(
    host: str, env: Mapping[str, str], known: dict[str, record.SkillRecord]
) -> SkillChange | None:
    path = skill_path(host, env)
    current, _dirs = read_skill(path)
    if current.text is None:
        return None
    if not skill_is_ours(current.text):
        return SkillChange(host, path, "skipped", "not managed by lean-beam; kept")
    write = planned_write(current, path, None, [])
    made = known.get(host)
    if made is not None and os.path.abspath(made.file) == os.path.abspath(path):
        write.drop_dirs = list(made.created_dirs)
    return SkillChange(host, path, "removed", write=write)


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
    for client, scope, path, reg in _targets(selected, registrations, env):
        change = _plan_file(client, scope, path, reg, root)
        result.changes.append(change)
        if change.action != "skipped":
            gone.add(record.key(client, path))
    remaining = [r for r in registrations if record.key(r.client, r.file) not in gone]
    still = {skill_host(r.client) for r in remaining}
    known = {s.host: s for s in record.load_skills(root)}
    for host in sorted({skill_host(c) for c in selected} - still):
        row = _plan_skill(host, env, known)
        if row is not None:
            result.skills.append(row)
        if row is None or row.action == "removed":
            known.pop(host, None)
    result.extra_writes.append(record.write(root, remaining, list(known.values())))
    return result


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
        result = apply_planned(
            root, operation, lambda: plan_remove(root, clients, all_clients, env, operation)
        )
    result.dry_run = False
    result.recovered = recovered
    if any(c.action == "removed" for c in result.changes):
        result.notes.append("restart the MCP clients (agents) so they drop lean-beam")
    return result
