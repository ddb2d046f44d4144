"""`lean-beam runtime prune`: remove old runtimes that nothing uses any more.

Plan: every `versions/` entry is validated structurally; invalid, symlinked or unexpected entries
are skipped and reported. Of the valid runtimes, the current one, active ones (a live process
holds the lease) and referenced ones (an MCP client registration points into them) are kept,
then the newest N of the rest; the others are candidates.

Apply (`--yes`), under the install lock: for each candidate, take its lease exclusively (so no
process can start on it), re-check it (same directory as planned, still valid, not current, not
referenced), rename it to `state/trash/<id>.<hex>`, drop its lease file, release the lease and
delete the trash. A runtime therefore never disappears under a live process, and a half-deleted
runtime never sits in `versions/` looking valid.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from beam_install.cleanup import delete_tree
from beam_runtime.errors import BeamError
from beam_runtime.layout import bin_dir, lease_path, trash_dir, versions_dir
from beam_runtime.listing import (
    RuntimeEntry,
    annotate,
    current_runtime_id,
    inspect_entry,
    scan_runtimes,
)

DEFAULT_KEEP_LATEST = 2
MAX_KEEP_LATEST = 64
# Test hook (fault injection): before each final re-check prune writes
# `<dir>/<n>.waiting` (the candidate id) and waits, bounded, for `<dir>/<n>.go`.
PAUSE_DIR_VAR = "BEAM_PRUNE_PAUSE_DIR"
PAUSE_TIMEOUT_S = 60.0


@dataclass
class Kept:
    runtime_id: str
    reasons: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.runtime_id, "reasons": self.reasons}


@dataclass
class Skipped:
    entry: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "reason": self.reason}


@dataclass
class PrunePlan:
    candidates: list[RuntimeEntry]
    kept: list[Kept]
    skipped: list[Skipped]


def plan_prune(root: Path, keep_latest: int, env: Mapping[str, str]) -> PrunePlan:
    """Decide what to keep, skip and remove, from the tree as it is now."""
    from beam_runtime.references import ReferenceIndex

    entries = annotate(root, scan_runtimes(root), ReferenceIndex.scan(root, env))
    plan = PrunePlan([], [], [])
    spare = 0
    for entry in entries:  # newest first, invalid entries last
        if entry.manifest is None:
            plan.skipped.append(Skipped(entry.name, entry.invalid or "invalid"))
        elif entry.holders():
            plan.kept.append(Kept(entry.name, entry.holders()))
        elif spare < keep_latest:
            spare += 1
            plan.kept.append(Kept(entry.name, [f"among the newest {keep_latest} unused"]))
        else:
            plan.candidates.append(entry)
    plan.candidates.reverse()  # oldest first
    return plan


@dataclass
class PruneResult:
    install_root: Path | None  # None when the root itself could not be found
    dry_run: bool
    keep_latest: int
    current: str | None
    plan: PrunePlan
    removed: list[str] = field(default_factory=list)
    kept_late: list[Kept] = field(default_factory=list)  # candidates a re-check saved
    skipped_late: list[Skipped] = field(default_factory=list)
    trash_cleared: int = 0
    error: BeamError | None = None
    flags: list[str] = field(default_factory=list)  # as given, repeated in the --yes hint

    @classmethod
    def failed(
        cls, root: Path | None, *, dry_run: bool, keep_latest: int, error: BeamError
    ) -> PruneResult:
        """The final object of a prune that stopped before it had a plan: nothing changed."""
        return cls(root, dry_run, keep_latest, None, PrunePlan([], [], []), error=error)

    def to_json(self) -> dict[str, Any]:
        return {
            "install_root": None if self.install_root is None else str(self.install_root),
            "dry_run": self.dry_run,
            "keep_latest": self.keep_latest,
            "current": self.current,
            "planned": [entry.name for entry in self.plan.candidates],
            "removed": self.removed,
            "kept": [k.to_json() for k in [*self.plan.kept, *self.kept_late]],
            "skipped": [s.to_json() for s in [*self.plan.skipped, *self.skipped_late]],
            "trash_cleared": self.trash_cleared,
            "error": self.error.to_json()["error"] if self.error else None,
        }

    def header_text(self) -> str:
        mode = "dry run" if self.dry_run else "removing"
        lines = [
            f"lean-beam runtime prune ({mode}, keeping the newest {self.keep_latest} unused)",
            f"install root: {self.install_root}",
            f"current: {self.current or 'none'}",
        ]
        lines += [f"keep: {k.runtime_id} ({', '.join(k.reasons)})" for k in self.plan.kept]
        lines += [f"skip: {s.entry}: {s.reason}" for s in self.plan.skipped]
        if self.dry_run:
            lines += [f"would remove: {e.name} ({e.path})" for e in self.plan.candidates]
        return "\n".join(lines)

    def summary_text(self) -> str:
        lines = [f"keep: {k.runtime_id} ({', '.join(k.reasons)})" for k in self.kept_late]
        lines += [f"skip: {s.entry}: {s.reason}" for s in self.skipped_late]
        count = len(self.plan.candidates)
        if self.dry_run:
            if count:
                lines.append(f"{count} runtime(s) would be removed; nothing was changed")
                lines.append(f"run `{self._command('--yes')}` to remove them")
            else:
                lines.append("nothing to remove")
        else:
            lines.append(f"removed {len(self.removed)} runtime(s)")
        spare = [k for k in self.plan.kept if k.reasons == [self.spare_reason()]]
        if spare:
            lines.append(
                f"{len(spare)} unused runtime(s) kept as the newest {self.keep_latest}; "
                f"`lean-beam runtime prune --keep-latest 0 --yes` removes them too"
            )
        return "\n".join(lines)

    def spare_reason(self) -> str:
        return f"among the newest {self.keep_latest} unused"

    def _command(self, *extra: str) -> str:
        given = [f for f in self.flags if f not in ("--dry-run", "--yes")]
        return " ".join(["lean-beam runtime prune", *given, *extra])

    def to_text(self) -> str:
        body = [self.header_text()]
        if not self.dry_run:
            body += [f"removed: {rid}" for rid in self.removed]
        body.append(self.summary_text())
        return "\n".join(body)


def _refuse_development() -> BeamError:
    from beam_runtime.layout import resolve_install_root

    try:
        wrapper = f"{bin_dir(resolve_install_root(None))}/lean-beam"
    except BeamError:
        wrapper = "<install root>/bin/lean-beam"
    return BeamError(
        "notInstalledRuntime",
        "prune runs only from an installed runtime, and this is a development copy of lean-beam",
        f"run `lean-beam install`, then `{wrapper} runtime prune`",
    )


def pruning_root() -> Path:
    """The install root of the running runtime, which must be the current one."""
    from beam_runtime.identity import locate_runtime, runtime_error

    location = locate_runtime()
    if location is None:
        raise _refuse_development()
    problem = runtime_error(str(location.runtime_dir))
    if problem is not None:
        raise BeamError(
            "invalidRuntime",
            f"refusing to prune: {problem}",
            "repair the install root as the message says, then retry",
        )
    check_running_is_current(location.root, location.runtime_id)
    return location.root


def check_running_is_current(root: Path, runtime_id: str) -> None:
    current = current_runtime_id(root)
    if current != runtime_id:
        raise BeamError(
            "runtimeNotCurrent",
            f"this is runtime {runtime_id}, but {root}/current is {current or 'missing'}; "
            "prune runs only from the current runtime",
            f"run `{bin_dir(root)}/lean-beam runtime prune` (or `lean-beam install` first)",
            {"running": runtime_id, "current": current},
        )


@contextmanager
def exclusive_lease(root: Path, runtime_id: str) -> Iterator[bool]:
    """Hold LOCK_EX on the runtime's lease; yields False when a live process holds it."""
    try:
        fd = os.open(lease_path(root, runtime_id), os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:  # without a lease file no launcher can start on this runtime
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _pause(env: Mapping[str, str], step: int, runtime_id: str) -> None:
    directory = env.get(PAUSE_DIR_VAR)
    if not directory:
        return
    staged = Path(directory, f".{step}.waiting.tmp")
    staged.write_text(runtime_id)
    os.replace(staged, Path(directory, f"{step}.waiting"))  # never seen half-written
    deadline = time.monotonic() + PAUSE_TIMEOUT_S
    while not Path(directory, f"{step}.go").exists():
        if time.monotonic() > deadline:
            raise BeamError(
                "internalError", f"prune pause {step} was never released", f"unset {PAUSE_DIR_VAR}"
            )
        time.sleep(0.005)


def clear_trash(root: Path) -> int:
    """Delete what earlier prunes left in `state/trash`; returns how many entries went."""
    trash = trash_dir(root)
    try:
        names = os.listdir(trash)
    except FileNotFoundError:
        return 0
    for name in names:
        delete_tree(trash / name)
    return len(names)


def _recheck(root: Path, entry: RuntimeEntry, env: Mapping[str, str]) -> Kept | Skipped | None:
    """Why `entry` must not be removed now, or None. Called with its lease held exclusively."""
    from beam_runtime.references import ReferenceIndex

    fresh = inspect_entry(entry.path)
    if fresh.inode is None:
        return Skipped(entry.name, "vanished before removal")
    if fresh.inode != entry.inode:
        return Skipped(entry.name, "replaced since the plan was made; left alone")
    if fresh.manifest is None:
        return Skipped(entry.name, fresh.invalid or "invalid")
    if current_runtime_id(root) == entry.name:
        return Kept(entry.name, ["current"])
    refs = ReferenceIndex.scan(root, env).referenced_by(entry.name)
    if refs:
        return Kept(entry.name, [f"referenced by {ref.describe()}" for ref in refs])
    return None


def _active_reason(root: Path, runtime_id: str) -> str:
    from beam_runtime.leases import lease_holders

    pids = ", ".join(str(h.pid) for h in lease_holders(root, runtime_id))
    return f"active (pid {pids})" if pids else "active"


def remove_runtime(
    root: Path, entry: RuntimeEntry, env: Mapping[str, str]
) -> Kept | Skipped | None:
    """Re-check and remove one candidate; returns why it stayed, or None once it is gone."""
    trash = trash_dir(root)
    with exclusive_lease(root, entry.name) as exclusive:
        if not exclusive:
            return Kept(entry.name, [_active_reason(root, entry.name)])
        reason = _recheck(root, entry, env)
        if reason is not None:
            return reason
        trash.mkdir(parents=True, exist_ok=True)
        target = trash / f"{entry.name}.{os.urandom(8).hex()}"
        os.rename(entry.path, target)
        lease_path(root, entry.name).unlink(missing_ok=True)
    # it is out of versions/ already; if deleting fails, the next prune or install clears it
    with suppress(OSError):
        delete_tree(target)
    return None


def run_prune(
    root: Path,
    *,
    keep_latest: int,
    apply: bool,
    env: Mapping[str, str],
    on_removed: Callable[[str], None] = lambda _rid: None,
    on_planned: Callable[[PruneResult], None] = lambda _result: None,
    running_id: str | None = None,
    lock_timeout: float | None = None,
) -> PruneResult:
    """Plan, and with `apply` remove. Errors after the first removal land in `result.error`."""
    from beam_install.root import inspect_root

    inspect_root(root)  # refuses a root with a bad marker or entries lean-beam does not own
    if not apply:
        plan = plan_prune(root, keep_latest, env)
        result = PruneResult(root, True, keep_latest, current_runtime_id(root), plan)
        on_planned(result)
        return result
    from beam_install.lock import PRUNE_LOCK_TIMEOUT, install_lock

    timeout = PRUNE_LOCK_TIMEOUT if lock_timeout is None else lock_timeout
    with install_lock(root, timeout=timeout, command="lean-beam runtime prune"):
        inspect_root(root)
        if running_id is not None:
            check_running_is_current(root, running_id)
        cleared = clear_trash(root)
        plan = plan_prune(root, keep_latest, env)
        result = PruneResult(root, False, keep_latest, current_runtime_id(root), plan)
        result.trash_cleared = cleared
        on_planned(result)
        _apply(root, result, env, on_removed)
    return result


def _apply(
    root: Path, result: PruneResult, env: Mapping[str, str], on_removed: Callable[[str], None]
) -> None:
    for step, entry in enumerate(result.plan.candidates):
        try:
            _pause(env, step, entry.name)
            outcome = remove_runtime(root, entry, env)
        except (OSError, MemoryError, BeamError) as exc:
            result.error = _stopped(root, entry, result.removed, exc)
            return
        if outcome is None:
            result.removed.append(entry.name)
            on_removed(entry.name)
        elif isinstance(outcome, Kept):
            result.kept_late.append(outcome)
        else:
            result.skipped_late.append(outcome)


def _stopped(root: Path, entry: RuntimeEntry, removed: list[str], exc: Exception) -> BeamError:
    cause = exc.message if isinstance(exc, BeamError) else f"{exc.__class__.__name__}: {exc}"
    done = ", ".join(removed) if removed else "nothing"
    return BeamError(
        "pruneIncomplete",
        f"prune stopped at {entry.name}: {cause}; already removed: {done}",
        "fix the cause, then run `lean-beam runtime prune --dry-run` to preview what is left",
        {"failed": entry.name, "removed": list(removed), "path": str(versions_dir(root))},
    )
