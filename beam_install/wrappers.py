"""Stable wrappers under `<root>/bin` and links to them in the user's bin dir.

A wrapper is a POSIX sh script marked `# managed-by: lean-beam`: it reads `current` once, exports
`BEAM_INSTALL_ROOT` and execs that runtime's launcher, so it works with the bare environment MCP
clients pass. A user-bin link is a symlink to the wrapper. Nothing unmanaged is ever replaced:
`plan_wrappers` and `plan_links` decide every action (and refuse) before anything is written.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from beam_runtime import layout, safe_read
from beam_runtime.errors import BeamError

MANAGED_LINE = "# managed-by: lean-beam"


@dataclass
class Action:
    """What happens to one wrapper or link: created, updated, unchanged or skipped."""

    name: str
    path: Path
    action: str
    reason: str | None = None

    def to_json(self) -> dict[str, str]:
        body = {"name": self.name, "path": str(self.path), "action": self.action}
        if self.reason is not None:
            body["reason"] = self.reason
        return body


def wrapper_text(root: Path, command: str) -> str:
    """The wrapper script; the root appears once, shell-quoted, and nowhere else.

    No byte of the root can become code (a newline included: it stays inside single quotes),
    `command` is one of `layout.COMMANDS`, and `current` must name exactly `versions/<id>` with
    an id of the characters a runtime id is made of.
    """
    if command not in layout.COMMANDS:
        raise ValueError(f"not a lean-beam command: {command!r}")
    quoted = shlex.quote(str(root))
    return f"""#!/bin/sh
{MANAGED_LINE}
# Runs {command} from the runtime that the root's `current` link names when it starts.
root={quoted}
target=$(readlink "$root/current") || target=
case "$target" in
  versions/*) id=${{target#versions/}} ;;
  *) id= ;;
esac
case "$id" in
  ''|.|..|*[!A-Za-z0-9._+!-]*)
    echo "{command}: no installed runtime at $root/current; run: lean-beam install" >&2
    exit 1 ;;
esac
launcher="$root/versions/$id/bin/{command}"
if [ ! -x "$launcher" ]; then
  echo "{command}: runtime $id, which $root/current names, is missing or damaged;" \
    "run: lean-beam install (the lean-beam of your pipx, uv, pip or nix installation)" >&2
  exit 1
fi
BEAM_INSTALL_ROOT=$root
export BEAM_INSTALL_ROOT
exec "$launcher" "$@"
"""


def _head(path: Path | str) -> str | None:
    """The first 4 KiB of a regular file (a FIFO or a device there never blocks), or None."""
    try:
        data = safe_read.read_bounded(str(path), safe_read.SMALL_CAP)
    except OSError:
        return None
    return data[:4096].decode("utf-8", "replace")


def is_managed_file(path: Path) -> bool:
    head = _head(path)
    return head is not None and MANAGED_LINE in head.splitlines()


def _unmanaged(path: Path, what: str) -> BeamError:
    return BeamError(
        "unmanagedPath",
        f"{path} exists and is not managed by lean-beam; refusing to replace it with {what}",
        "move or delete that file yourself, or choose another --bin-dir / --install-root",
        {"path": str(path)},
    )


def plan_wrappers(root: Path) -> list[Action]:
    """Actions for `<root>/bin/*`; raises `unmanagedPath` before anything is written."""
    actions = []
    for command in layout.COMMANDS:
        path = layout.bin_dir(root) / command
        if not os.path.lexists(path):
            actions.append(Action(command, path, "created"))
        elif path.is_symlink() or not path.is_file() or not is_managed_file(path):
            raise _unmanaged(path, "a lean-beam wrapper")
        elif _head(path) == wrapper_text(root, command):
            actions.append(Action(command, path, "unchanged"))
        else:
            actions.append(Action(command, path, "updated"))
    return actions


def _replace_file(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.urandom(4).hex()}")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)


def write_wrappers(root: Path, actions: list[Action]) -> None:
    for action in actions:
        if action.action in ("created", "updated"):
            _replace_file(action.path, wrapper_text(root, action.name))


def _owning_environment(path: Path) -> str | None:
    """pipx/uv/nix/venv when `path` is a lean-beam console script of such an environment."""
    real = Path(os.path.realpath(path))
    head = _head(real)
    if head is None or "beam_runtime.entry" not in head:
        return None
    prefix = real.parent.parent
    if str(real).startswith("/nix/store/"):
        return "nix"
    if (prefix / "pipx_metadata.json").exists():
        return "pipx"
    if (prefix / "uv-receipt.toml").exists():
        return "uv"
    if (prefix / "pyvenv.cfg").exists():
        return "venv"
    return "another installation of lean-beam"


def _points_at(link: Path, wrapper: Path) -> bool:
    target = os.readlink(link)
    return target == str(wrapper) or os.path.realpath(link) == os.path.realpath(wrapper)


def plan_links(root: Path, bin_dir: Path) -> list[Action]:
    """Actions for `<bin_dir>/*` links to the wrappers; raises `unmanagedPath` when blocked."""
    actions = []
    for command in layout.COMMANDS:
        path = bin_dir / command
        wrapper = layout.bin_dir(root) / command
        if not os.path.lexists(path):
            actions.append(Action(command, path, "created"))
        elif path.is_symlink() and _points_at(path, wrapper):
            actions.append(Action(command, path, "unchanged"))
        elif (owner := _owning_environment(path)) is not None:
            reason = f"owned by {owner} (it delegates to current)"
            actions.append(Action(command, path, "skipped", reason))
        else:
            raise _unmanaged(path, f"a link to {wrapper}")
    return actions


def write_links(root: Path, bin_dir: Path, actions: list[Action]) -> None:
    if any(action.action == "created" for action in actions):
        bin_dir.mkdir(parents=True, exist_ok=True)
    for action in actions:
        if action.action == "created":
            tmp = bin_dir / f".{action.name}.tmp-{os.urandom(4).hex()}"
            os.symlink(layout.bin_dir(root) / action.name, tmp)
            os.replace(tmp, action.path)
