"""Names inside an install root, and where the root and the user bin dir are.

Stdlib only and import-light: the console scripts' delegation check runs this module before any
heavy import. The tree (docs/RUNTIME.md, "The install root"):

    <root>/.lean-beam-install-root      ownership marker
    <root>/current -> versions/<id>     relative symlink, replaced through .current.tmp-<hex>
    <root>/versions/<id>/               one immutable runtime (manifest.json, site/, bin/,
                                        __pycache__/bytecode.sha256)
    <root>/bin/<command>                stable wrappers
    <root>/state/install.lock(.json)    install lock and its holder record
    <root>/state/leases/<id>.lease      shared leases of live processes
    <root>/state/staging/ trash/ gcroots/
    <root>/state/setup/                 setup's lock, journal and registrations
    <root>/state/projects.json (.lock)  projects the MCP server served, and its writers' lock
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from beam_runtime.errors import BeamError

MARKER_NAME = ".lean-beam-install-root"
MANIFEST_NAME = "manifest.json"
CURRENT_NAME = "current"
CURRENT_TMP_PREFIX = ".current.tmp-"
COMMANDS = ("lean-beam", "lean-beam-mcp", "beam-cli")
ROOT_ENTRIES = frozenset({MARKER_NAME, CURRENT_NAME, "versions", "bin", "state"})
STATE_ENTRIES = frozenset(
    {
        "install.lock",
        "install.lock.json",
        "leases",
        "staging",
        "trash",
        "gcroots",
        "setup",
        "projects.json",  # the projects the MCP server served (beam_runtime.served)
        "projects.lock",
    }
)
STATE_TMP_PREFIX = ".projects.json."  # a record of served projects being written
ROOT_ENV = "BEAM_INSTALL_ROOT"
BIN_ENV = "BEAM_BIN_HOME"


def marker_path(root: Path) -> Path:
    return root / MARKER_NAME


def current_link(root: Path) -> Path:
    return root / CURRENT_NAME


def versions_dir(root: Path) -> Path:
    return root / "versions"


def runtime_dir(root: Path, runtime_id: str) -> Path:
    return versions_dir(root) / runtime_id


def bin_dir(root: Path) -> Path:
    """The stable wrappers MCP clients are registered with."""
    return root / "bin"


def state_dir(root: Path) -> Path:
    return root / "state"


def lock_path(root: Path) -> Path:
    return state_dir(root) / "install.lock"


def lock_holder_path(root: Path) -> Path:
    return state_dir(root) / "install.lock.json"


def leases_dir(root: Path) -> Path:
    return state_dir(root) / "leases"


def lease_path(root: Path, runtime_id: str) -> Path:
    return leases_dir(root) / f"{runtime_id}.lease"


def staging_dir(root: Path) -> Path:
    return state_dir(root) / "staging"


def trash_dir(root: Path) -> Path:
    return state_dir(root) / "trash"


def gcroots_dir(root: Path) -> Path:
    return state_dir(root) / "gcroots"


def launcher_path(runtime: Path, command: str) -> Path:
    """A runtime's own launcher (`versions/<id>/bin/<command>`)."""
    return runtime / "bin" / command


def default_install_root() -> str:
    """platformdirs' user data dir + `beam`, computed without importing platformdirs.

    platformdirs costs ~20 ms to import, too much for the delegation fast path; a test checks
    that this agrees with `platformdirs.user_data_dir("beam")`.
    """
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Application Support/beam")
    base = os.environ.get("XDG_DATA_HOME", "").strip()
    if not base:
        base = os.path.expanduser("~/.local/share")
    return os.path.join(base, "beam")


def _refuse(message: str, path: str) -> BeamError:
    from beam_runtime.errors import BeamError

    return BeamError(
        "invalidInstallRoot",
        message,
        "choose an absolute directory you own, e.g. --install-root ~/.local/share/beam",
        {"path": path},
    )


def root_problem(raw: str) -> tuple[str, str | None]:
    """The root-path rules on a spelled root: (canonical path, None) or (raw, why it is refused).

    String-only so that the delegation fast path can use it without pathlib or BeamError.
    """
    if not raw.strip():
        return raw, "install root is empty"
    if ".." in raw.split("/"):
        return raw, f"install root must not contain '..': {raw}"
    expanded = os.path.expanduser(raw)
    if not os.path.isabs(expanded):
        return raw, f"install root must be an absolute path: {raw}"
    normal = os.path.normpath(expanded)
    if normal in ("/", "//"):
        return raw, "refusing to use / as the install root"
    if os.path.islink(normal):
        return raw, f"refusing a symlinked install root: {normal}"
    canonical = os.path.realpath(normal)
    if canonical == os.path.realpath(os.path.expanduser("~")):
        return raw, f"refusing to use the home directory itself as the install root: {raw}"
    return canonical, None


def spelled_install_root(explicit: str | None) -> str:
    """The root as spelled: `--install-root`, else `BEAM_INSTALL_ROOT`, else the default."""
    if explicit is not None:
        return explicit
    return os.environ.get(ROOT_ENV) or default_install_root()


def check_root_path(raw: str) -> Path:
    """Apply the root-path rules to a spelled root and return its canonical path (no writes)."""
    from pathlib import Path

    canonical, problem = root_problem(raw)
    if problem is not None:
        raise _refuse(problem, raw)
    return Path(canonical)


def resolve_install_root(explicit: str | None) -> Path:
    """`--install-root`, else `BEAM_INSTALL_ROOT`, else the platform default; canonical path.

    Raises `BeamError(invalidInstallRoot)` for the refusals of `root_problem`.
    """
    return check_root_path(spelled_install_root(explicit))


def resolve_bin_dir(explicit: str | None) -> Path:
    """`--bin-dir`, else `BEAM_BIN_HOME`, else `~/.local/bin`; absolute, without `..`."""
    from pathlib import Path

    from beam_runtime.errors import BeamError

    raw = explicit if explicit is not None else os.environ.get(BIN_ENV) or "~/.local/bin"
    expanded = os.path.expanduser(raw)
    if ".." in raw.split("/") or not os.path.isabs(expanded):
        raise BeamError(
            "invalidBinDir",
            f"bin dir must be an absolute path without '..': {raw}",
            "pass an absolute directory, e.g. --bin-dir ~/.local/bin",
            {"path": raw},
        )
    return Path(os.path.normpath(expanded))
