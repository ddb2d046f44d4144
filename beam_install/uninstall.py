"""`lean-beam uninstall`: our registrations and skills, our user-bin links, then the install root.

Refused while a process other than this one holds a runtime lease (the error names the pids):
removing a runtime under a live agent would break it. The registrations go first, through the
same transaction as `lean-beam remove --all`; then the links that point at `<root>/bin`; then,
unless `--keep-root`, the root itself, under the install lock so no install runs meanwhile.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from beam_install.plan import SetupResult
from beam_runtime import layout
from beam_runtime.errors import BeamError


@dataclass
class UninstallResult:
    registrations: SetupResult
    install_root: Path
    keep_root: bool
    links: list[str] = field(default_factory=list)
    root_removed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            **self.registrations.to_json(),
            "install_root": str(self.install_root),
            "links": self.links,
            "root": "kept"
            if self.keep_root
            else ("removed" if self.root_removed else "would_remove"),
        }

    def to_text(self) -> str:
        dry = self.registrations.dry_run
        lines = [self.registrations.to_text()]
        verb = "would remove" if dry else "removed"
        lines += [f"  link {path}: {verb}" for path in self.links]
        if self.keep_root:
            lines.append(f"  install root {self.install_root}: kept (--keep-root)")
        else:
            lines.append(f"  install root {self.install_root}: {verb}")
        return "\n".join(lines)


def active_holders(root: Path) -> list[str]:
    """Each live process other than this one that holds a runtime's lease, in words."""
    from beam_runtime.leases import all_lease_holders

    versions = layout.versions_dir(root)
    names = sorted(os.listdir(versions)) if versions.is_dir() else []
    holders = all_lease_holders(root, names)
    return [f"{name}: {h.describe()}" for name in names for h in holders.get(name, [])]


def our_links(root: Path, bin_dir: Path) -> list[Path]:
    """User-bin links that point at this root's wrappers (nothing else is ours)."""
    found = []
    for command in layout.COMMANDS:
        link = bin_dir / command
        wrapper = layout.bin_dir(root) / command
        if link.is_symlink() and (
            os.readlink(link) == str(wrapper) or os.path.realpath(link) == os.path.realpath(wrapper)
        ):
            found.append(link)
    return found


def run_uninstall(
    explicit_root: str | None,
    bin_dir: str | None,
    *,
    apply: bool,
    keep_root: bool,
    env: Mapping[str, str],
) -> UninstallResult:
    from beam_install.remove import run_remove
    from beam_install.setup import installed_root

    root = installed_root(explicit_root)
    links_dir = layout.resolve_bin_dir(bin_dir)
    busy = active_holders(root)
    if busy and not keep_root:
        raise BeamError(
            "runtimeActive",
            "refusing to uninstall while lean-beam processes run: " + "; ".join(busy),
            "stop those agents (MCP clients), then retry; or --keep-root to remove only the "
            "registrations and links",
            {"holders": busy},
        )
    links = our_links(root, links_dir)
    registrations = run_remove(
        root, [], True, apply=apply, env=env, lock_timeout=30.0, operation="uninstall"
    )
    result = UninstallResult(registrations, root, keep_root, [str(p) for p in links])
    if not apply:
        return result
    for link in links:
        link.unlink(missing_ok=True)
    if not keep_root:
        _remove_root(root)
        result.root_removed = True
    return result


def _remove_root(root: Path) -> None:
    from beam_install.lock import install_lock
    from beam_install.prune import delete_tree

    with install_lock(root, timeout=10.0, command="lean-beam uninstall"):
        busy = active_holders(root)
        if busy:
            raise BeamError(
                "runtimeActive",
                "a lean-beam process started meanwhile: " + "; ".join(busy),
                "stop it, then run `lean-beam uninstall --yes` again",
                {"holders": busy},
            )
        # a short name of its own: the root's name may already be near NAME_MAX
        trash = root.with_name(f".lean-beam-uninstall-{os.urandom(4).hex()}")
        os.rename(root, trash)  # the root vanishes at once; the lock file goes with it
    delete_tree(trash)
