"""`lean-beam setup`: register `<root>/bin/lean-beam-mcp` with MCP clients, as one transaction.

The plan reads every selected config first and refuses the whole run when one is unusable
(`plan.read_config`); nothing is written without `--yes`. Entries are ours when they carry
`LEAN_BEAM_MANAGED=1` (or run this root's wrapper or runtimes); an entry of the same name that
is not ours is reported and left alone unless `--force-unmanaged`. `--refresh` rewrites only
entries that are ours and adds none. The skill for the selected hosts (and a refresh of any
stale copy of ours), and the record of what was registered and of what setup created for it
(so that remove can give every byte back), change in the same transaction (`journal.commit`).
A file a client rewrote between the plan and its write is planned again (`apply_planned`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from beam_install import record
from beam_install.clients import (
    CLIENTS,
    config_path,
    config_path_spelled,
    detect,
    format_for,
    skill_host,
)
from beam_install.clients.splice import Splice, diff, rebase, with_file_newlines
from beam_install.journal import (
    ConfigChanged,
    Current,
    FileWrite,
    commit,
    failpoint,
    journal_path,
    planned_write,
    read_current_now,
    recover,
    setup_lock,
)
from beam_install.plan import (
    Change,
    SetupResult,
    SkillChange,
    bounded,
    check_writable,
    file_write,
    is_ours,
    missing_dirs,
    read_config,
)
from beam_install.skill import SKILL_HOSTS, SKILL_TEXT, skill_path
from beam_install.skill import is_ours as skill_is_ours
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
    except (ValueError, RecursionError) as exc:
        found = {"unparsable": str(exc)}
    if found != expected:
        raise BeamError(
            "internalError",
            f"the new text planned for {path} does not read back as planned; nothing written",
            "report this with the file attached (remove secrets first)",
            {"file": str(path)},
        )


def edited(path: Path, edit: Any) -> str:
    """`edit()` (a format's text edit); configInvalid when the text cannot be taken apart."""
    try:
        return str(edit())
    except (ValueError, RecursionError) as exc:
        detail = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise BeamError(
            "configInvalid",
            f"{path} cannot be edited ({detail}); it was left untouched",
            f"fix the syntax of {path}, then retry",
            {"file": str(path)},
        ) from None


@dataclass
class Planned:
    """One client's row, and what setup creates for it (the record keeps it for remove)."""

    change: Change
    created_file: bool = False
    created_dirs: tuple[str, ...] = ()
    created_container: bool = False
    splice: Splice | None = None


def plan_entry(
    client: str,
    scope: str,
    path: Path,
    root: Path,
    request: SetupRequest,
    named: bool,
    known: record.Registration | None = None,
) -> Planned | None:
    """One client's row (None: `--refresh` and nothing of ours there)."""
    fmt = format_for(client, path)
    config = read_config(path, fmt)
    wrapper = bin_dir(root) / "lean-beam-mcp"
    command = str(wrapper)
    entry = fmt.entry(config.doc)
    change = Change(client, scope, path, "unchanged", before=entry)
    planned = Planned(change)
    if entry is None:
        if request.refresh:
            if not named:
                return None
            change.action, change.reason = "skipped", "no lean-beam entry (--refresh adds none)"
            return planned
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
    old = config.text or ""
    if change.action in ("created", "updated") and change.after is not None:
        check_writable(config)
        after = change.after
        text = with_file_newlines(old, edited(path, lambda: fmt.with_entry(old, after)))
        _verify(fmt, text, change.after, path)
        change.write = file_write(config, text)
    if change.action == "created" and change.write is not None:
        planned.created_file = config.text is None
        planned.created_dirs = tuple(config.new_dirs)
        planned.created_container = not fmt.has_container(config.doc)
        planned.splice = diff(old, change.write.new or "")
    elif known is not None and change.action in ACTIVE:
        planned.created_file = known.created_file
        planned.created_dirs = known.created_dirs
        planned.created_container = known.created_container
        planned.splice = known.splice
        if change.write is not None and known.splice is not None:
            planned.splice = rebase(known.splice, old, change.write.new or "")
    return planned


def plan_skills(
    hosts: set[str], env: Mapping[str, str], refresh: bool, root: Path
) -> tuple[list[SkillChange], list[record.SkillRecord]]:
    """A skill for each host in `hosts`, and a refresh of every stale copy of ours anywhere;
    with the skill records the result leaves (what setup created, for remove)."""
    known = {s.host: s for s in record.load_skills(root)}
    rows = []
    for host in sorted(SKILL_HOSTS):
        path = skill_path(host, env)
        row = _plan_skill(host, path, refresh or host not in hosts)
        if row is None:
            continue
        rows.append(row)
        if row.action == "created" and row.write is not None:
            known[host] = record.SkillRecord(host, str(path), tuple(row.write.new_dirs))
    return rows, list(known.values())


def read_skill(path: Path) -> tuple[Current, list[str]]:
    """The skill file at `path` as it is now, and its missing directories (bounded); BeamError
    when it must not be touched."""
    try:
        return bounded(partial(_load_skill, path), path)
    except IsADirectoryError:
        raise BeamError(
            "configNotAFile",
            f"{path} is a directory, not a skill file",
            f"move {path} aside, then retry",
            {"file": str(path)},
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BeamError(
            "configUnreadable",
            f"cannot read {path}: {exc}",
            f"make {path} readable or move it aside, then retry",
            {"file": str(path)},
        ) from None


def _load_skill(path: Path) -> tuple[Current, list[str]]:
    if os.path.isdir(path):
        raise IsADirectoryError(path)
    current = read_current_now(path)
    return current, missing_dirs(path) if current.text is None else []


def _plan_skill(host: str, path: Path, refresh_only: bool) -> SkillChange | None:
    current, dirs = read_skill(path)
    old = current.text
    if old is None:
        if refresh_only:
            return None
        write = FileWrite(path, None, SKILL_TEXT, 0o644, dirs, None, current.target)
        return SkillChange(host, path, "created", write=write)
    if not skill_is_ours(old):
        if refresh_only:
            return None
        return SkillChange(host, path, "skipped", "exists and is not managed by lean-beam; kept")
    if old == SKILL_TEXT:
        return None if refresh_only else SkillChange(host, path, "unchanged")
    write = planned_write(current, path, SKILL_TEXT, [])
    return SkillChange(host, path, "updated", "refreshed: it was an older copy", write=write)


def _located(client: str, request: SetupRequest, env: Mapping[str, str], project: Path) -> Path:
    spelled = config_path_spelled(client, request.scope, env, project)
    return bounded(partial(config_path, client, request.scope, env, project), spelled)


def plan_setup(root: Path, request: SetupRequest, env: Mapping[str, str], cwd: Path) -> SetupResult:
    """Everything setup would change, read from the files as they are now."""
    clients, named = select_clients(request, env)
    project = (request.project or cwd).resolve()
    result = SetupResult("setup", True)
    registrations = record.load(root)
    known = {record.key(r.client, r.file): r for r in registrations}
    for client in clients:
        path = _located(client, request, env, project)
        old = known.get(record.key(client, path))
        planned = plan_entry(client, request.scope, path, root, request, named, old)
        if planned is None:
            continue
        change = planned.change
        result.changes.append(change)
        if change.action in ACTIVE:
            registrations.append(
                record.Registration(
                    client,
                    request.scope,
                    str(path),
                    planned.created_file,
                    planned.created_dirs,
                    planned.created_container,
                    planned.splice,
                )
            )
    hosts = {skill_host(c.client) for c in result.changes if c.action in ACTIVE}
    result.skills, skills = plan_skills(hosts, env, request.refresh, root)
    if result.writes():
        result.extra_writes.append(record.write(root, registrations, skills))
    return result


def _finish(result: SetupResult) -> None:
    if any(c.action in ("created", "updated") for c in result.changes):
        result.notes.append("restart the MCP clients (agents) so they load the new entries")
    skipped = [c for c in result.changes if c.action == "skipped" and "force" in (c.reason or "")]
    if skipped:
        result.notes.append("entries marked skipped were left exactly as they are")


PLAN_ATTEMPTS = 8


def changed_meanwhile(changed: ConfigChanged, operation: str) -> BeamError:
    return BeamError(
        "configChanged",
        f"{changed.path} kept changing while lean-beam {operation} wrote it (its client "
        f"rewrites it); after {PLAN_ATTEMPTS} tries nothing was changed",
        f"retry `lean-beam {operation}`; if it keeps failing, close the client that keeps "
        "rewriting that file first",
        {"file": str(changed.path)},
    )


def apply_planned(root: Path, operation: str, make_plan: Callable[[], SetupResult]) -> SetupResult:
    """Plan and commit (the caller holds the lock); a file that changed between the plan and
    its write is planned again from its new contents, up to `PLAN_ATTEMPTS` times."""
    for _attempt in range(PLAN_ATTEMPTS):
        result = make_plan()
        try:
            commit(root, operation, [*result.writes(), *result.extra_writes])
        except ConfigChanged as changed:
            last = changed
            continue
        return result
    raise changed_meanwhile(last, operation)


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
        result = apply_planned(root, "setup", lambda: plan_setup(root, request, env, cwd))
    result.dry_run = False
    result.recovered = recovered
    _finish(result)
    return result
