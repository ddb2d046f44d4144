"""`lean-beam install`: stage the running code as an immutable runtime and switch `current`.

Order (docs/RUNTIME.md, "Install"): every refusal is decided before the first write; then,
holding `state/install.lock`: re-check and claim the root, clean stale staging, reuse a fully valid
`versions/<id>` or stage, seal and publish a new one, write the wrappers and user-bin links,
switch `current` atomically. Killing the process at any point leaves the previous `current`
runnable. The text output ends with the next step: the `lean-beam setup` plan for the MCP
clients found on this machine, and a note when the user bin dir is not on PATH.
`BEAM_INSTALL_FAILPOINT=<step>` makes the installer SIGKILL itself at a named step
(fault injection for the tests; see `FAILPOINTS`).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from beam_install.cleanup import clean_stale
from beam_install.current import current_id, switch_current
from beam_install.lock import install_lock
from beam_install.payload import Payload, compute_payload, nix_store_paths
from beam_install.root import claim_root, inspect_root, prepare_state
from beam_install.wrappers import Action, plan_links, plan_wrappers, write_links, write_wrappers
from beam_runtime import layout
from beam_runtime.errors import BeamError
from beam_runtime.record_check import full_problem

FAILPOINT_ENV = "BEAM_INSTALL_FAILPOINT"
FAILPOINTS = (
    "locked",
    "cleaned",
    "staging-copied",
    "manifest-written",
    "published",
    "wrappers-written",
    "links-written",
    "current-tmp",
    "current-switched",
)


def failpoint(step: str) -> None:
    if os.environ.get(FAILPOINT_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


@dataclass
class InstallResult:
    """What `lean-beam install` did (or, with `--dry-run`, would do), and its `--json` shape."""

    dry_run: bool
    root: Path
    runtime_id: str
    version: str
    action: str
    current_from: str | None
    wrappers: list[Action]
    links: list[Action]
    cleaned: list[str] = field(default_factory=list)
    gcroot: str | None = None
    setup_plan: Any = None  # `lean-beam setup`'s plan for the clients found here, or a BeamError
    links_dir: Path | None = None

    @property
    def changed(self) -> bool:
        return self.current_from != self.runtime_id

    @property
    def runtime_dir(self) -> Path:
        return layout.runtime_dir(self.root, self.runtime_id)

    def registration(self) -> dict[str, str]:
        server = shlex.quote(str(layout.bin_dir(self.root) / "lean-beam-mcp"))
        return {
            "codex": f"codex mcp add lean-beam -- {server}",
            "claude": f"claude mcp add --scope user lean-beam -- {server}",
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "install_root": str(self.root),
            "runtime": {
                "id": self.runtime_id,
                "version": self.version,
                "dir": str(self.runtime_dir),
                "action": self.action,
            },
            "current": {"from": self.current_from, "to": self.runtime_id, "changed": self.changed},
            "wrappers": [action.to_json() for action in self.wrappers],
            "links": [action.to_json() for action in self.links],
            "cleaned": self.cleaned,
            "restart_required": self.changed and not self.dry_run,
            "gcroot": self.gcroot,
            "registration": self.registration(),
            "setup_plan": self._plan_json(),
        }

    def _plan_json(self) -> dict[str, Any] | None:
        if isinstance(self.setup_plan, BeamError):
            return self.setup_plan.to_json()
        return None if self.setup_plan is None else self.setup_plan.to_json()

    def _next_steps(self) -> list[str]:
        lines = []
        if self.links_dir is not None and not _on_path(self.links_dir):
            lines.append(
                f"note: {self.links_dir} is not on PATH: add it (export "
                f'PATH="{self.links_dir}:$PATH") or run {self.root}/bin/lean-beam'
            )
        lines.append(
            "next: register lean-beam-mcp with your MCP clients: lean-beam setup --yes "
            "(or name them: lean-beam setup codex claude-code --yes)"
        )
        if isinstance(self.setup_plan, BeamError):
            lines.append(f"  ({self.setup_plan.message}; {self.setup_plan.fix})")
        elif self.setup_plan is not None:
            lines += ["  " + line for line in self.setup_plan.to_text().splitlines()]
        lines.append("or by hand:")
        lines += [f"  {command}" for command in self.registration().values()]
        lines.append(
            "Lean itself comes from elan (https://github.com/leanprover/elan); "
            "`lean-beam doctor` checks everything."
        )
        return lines

    def to_text(self) -> str:
        head = (
            "lean-beam install (dry run: nothing written)" if self.dry_run else "lean-beam install"
        )
        lines = [
            head,
            f"install root: {self.root}",
            f"runtime: {self.runtime_id} ({self.action.replace('_', ' ')})",
            f"current: {self.current_from or '(none)'} -> {self.runtime_id}"
            + ("" if self.changed else " (unchanged)"),
        ]
        lines += [f"wrapper: {a.path} ({a.action})" for a in self.wrappers]
        for link in self.links:
            why = f": {link.reason}" if link.reason else ""
            lines.append(f"link: {link.path} ({link.action}{why})")
        lines += [f"cleaned: {path}" for path in self.cleaned]
        if self.gcroot:
            lines.append(f"nix gc root: {self.gcroot}")
        lines += self._next_steps()
        if self.changed and not self.dry_run:
            lines.append("Restart running agents so they pick up the new runtime.")
        return "\n".join(lines)


def _on_path(directory: Path) -> bool:
    entries = os.environ.get("PATH", "").split(os.pathsep)
    return any(e and os.path.realpath(e) == os.path.realpath(directory) for e in entries)


def _setup_plan(root: Path) -> Any:
    """What `lean-beam setup --dry-run` would do for the clients found on this machine."""
    from beam_install.setup import SetupRequest, plan_setup

    try:
        return plan_setup(root, SetupRequest([]), os.environ, Path(os.getcwd()))
    except BeamError as error:
        return error
    except Exception as exc:  # the install is done; a hint must never turn it into a failure
        return BeamError(
            "internalError",
            f"could not plan setup ({exc})",
            "run `lean-beam setup` to see the plan",
        )


def _existing_is_reusable(runtime: Path, verified: Path | None = None) -> bool:
    """False when `versions/<id>` is absent; True when it validates fully; raises otherwise.

    Install calls it holding the lock, so a prune cannot remove the runtime while it is read.
    `verified` is a runtime already checked in full by this process (the one it runs from).
    """
    if not os.path.lexists(runtime):
        return False
    if verified is not None and runtime == verified:
        return True
    _refuse_damaged(runtime, "the existing runtime")
    return True


def _refuse_damaged(runtime: Path, what: str) -> None:
    problem = full_problem(runtime)
    if problem is None:
        return
    raise BeamError(
        "invalidRuntime",
        f"{what} {runtime} fails validation: {problem}",
        f"stop lean-beam clients, move {runtime} out of {runtime.parent} (keep it for "
        "inspection) and run `lean-beam install` again",
        {"path": str(runtime)},
    )


def _verified_running_runtime() -> Path | None:
    """The runtime this process runs from, checked in full (None for a development copy).

    Install from a runtime copies that runtime's own files and bytecode, so a damaged one must
    never be copied into a new runtime that would then record the damage as verified.
    """
    from beam_runtime import identity

    running = identity.code_runtime_dir()
    if running is None:
        return None
    runtime = Path(running)
    _refuse_damaged(runtime, "the runtime this lean-beam runs from,")
    return runtime


def _build(root: Path, payload: Payload) -> None:
    from beam_install import staging

    stage = staging.new_stage(root, payload.runtime_id)
    try:
        staging.fill_stage(stage, payload)
        failpoint("staging-copied")
        staging.seal_stage(stage, payload)
        failpoint("manifest-written")
        staging.create_lease(root, payload.runtime_id)
        staging.publish(stage, root, payload.runtime_id)
    except (OSError, MemoryError, BeamError):
        _discard(stage)  # a full disk or a denied path leaves nothing behind
        raise
    failpoint("published")


def _discard(stage: Path) -> None:
    from beam_install.cleanup import delete_tree

    with contextlib.suppress(OSError):
        delete_tree(stage)
    shutil.rmtree(stage, ignore_errors=True)  # whatever a failed delete left


def _nix_gcroot(root: Path, payload: Payload) -> str | None:
    """Keep what a runtime needs from /nix/store alive: `gcroots/<id>` roots the
    interpreter, `<id>-2`, `<id>-3`... the store paths the payload was copied from."""
    store_paths = nix_store_paths(payload)
    nix_store = shutil.which("nix-store")
    if not store_paths or nix_store is None:
        return None
    gcroot = layout.gcroots_dir(root) / payload.runtime_id
    gcroot.parent.mkdir(parents=True, exist_ok=True)
    command = [nix_store, "--add-root", str(gcroot), "--realise", *store_paths]
    done = subprocess.run(command, capture_output=True, timeout=60, check=False)
    return str(gcroot) if done.returncode == 0 else None


def install(
    install_root: str | None,
    bin_dir: str | None,
    *,
    dry_run: bool = False,
    lock_timeout: float = 120.0,
) -> InstallResult:
    root = layout.resolve_install_root(install_root)
    links_dir = layout.resolve_bin_dir(bin_dir)
    inspect_root(root)
    verified = _verified_running_runtime()
    payload = compute_payload()
    runtime = layout.runtime_dir(root, payload.runtime_id)
    wrappers = plan_wrappers(root)
    links = plan_links(root, links_dir)
    if dry_run:
        action = "would_reuse" if _existing_is_reusable(runtime, verified) else "would_create"
        return InstallResult(
            True,
            root,
            payload.runtime_id,
            payload.version,
            action,
            current_id(root),
            wrappers,
            links,
            setup_plan=_setup_plan(root),
            links_dir=links_dir,
        )
    prepare_state(root)
    with install_lock(root, timeout=lock_timeout, command="lean-beam install"):
        failpoint("locked")
        inspect_root(root)
        claim_root(root)
        cleaned = clean_stale(root)
        failpoint("cleaned")
        reuse = _existing_is_reusable(runtime, verified)  # under the lock: no prune races it
        if not reuse:
            _build(root, payload)
        wrappers = plan_wrappers(root)
        links = plan_links(root, links_dir)
        write_wrappers(root, wrappers)
        failpoint("wrappers-written")
        write_links(root, links_dir, links)
        failpoint("links-written")
        gcroot = _nix_gcroot(root, payload)
        before = current_id(root)
        switch_current(root, payload.runtime_id, before_replace=lambda: failpoint("current-tmp"))
        failpoint("current-switched")
    action = "reused" if reuse else "created"
    return InstallResult(
        False,
        root,
        payload.runtime_id,
        payload.version,
        action,
        before,
        wrappers,
        links,
        cleaned,
        gcroot,
        _setup_plan(root),
        links_dir,
    )
