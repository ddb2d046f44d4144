"""Console scripts, and the real mains that runtime launchers call.

`lean_beam`, `lean_beam_mcp` and `beam_cli` are what pipx, uv, nix or pip put on PATH. They
first try to hand over to the installed runtime `<root>/current`, with checks cheap
enough to run before any heavy import: the marker names this root, `current` is
`versions/<id>`, its manifest says `<id>`, and the launcher is executable. No hashing.
Delegation is skipped for `lean-beam install` (it always stages the code it was run from), when
`BEAM_NO_DELEGATE` is set to anything but `0`, and for code already running from `versions/`.

`run_lean_beam`, `run_lean_beam_mcp` and `run_beam_cli` never delegate; they are the entry points
recorded in a runtime's manifest. This module sits at the bottom layer, so it names the command
lines of the upper packages (`beam_install`, `beam_mcp`) by string in `MAINS` and imports them
only when that command runs: the one place besides the launcher where product modules are
loaded by name (docs/CONTRIBUTING.md, "Layers").
"""

from __future__ import annotations

import os
import sys

from beam_runtime import identity, layout
from beam_runtime.install_root import InstallRoot
from beam_runtime.version import VERSION

ENTRY_POINTS = {
    "lean-beam": "beam_runtime.entry:run_lean_beam",
    "lean-beam-mcp": "beam_runtime.entry:run_lean_beam_mcp",
    "beam-cli": "beam_runtime.entry:run_beam_cli",
}
NO_DELEGATE_ENV = "BEAM_NO_DELEGATE"
# The command line each console script runs, as `module:function`.
MAINS = {
    "lean-beam": "beam_install.cli.lean_beam:main",
    "lean-beam-mcp": "beam_mcp.main:main",
    "beam-cli": "beam_runtime.cli.beam_cli:main",
}


def current_launcher(command: str) -> tuple[str, str, str] | None:
    """(root, launcher, runtime version) of a sound `<root>/current`, or None."""
    path, problem = layout.root_problem(layout.spelled_install_root(None))
    if problem is not None:
        return None
    root = InstallRoot(path)
    if root.marker_problem() is not None:
        return None
    runtime_id = root.current_runtime()
    if runtime_id is None:
        return None
    runtime = root.runtime_dir(runtime_id)
    manifest, problem = identity.read_manifest(runtime)
    launcher = os.path.join(runtime, "bin", command)
    if manifest is None or not os.access(launcher, os.X_OK) or os.path.islink(launcher):
        return None
    return path, launcher, str(manifest["version"])


def _delegation_disabled(argv: list[str], command: str) -> bool:
    if os.environ.get(NO_DELEGATE_ENV, "") not in ("", "0"):
        return True
    if command == "lean-beam" and argv[1:2] == ["install"]:
        return True
    return identity.code_runtime_dir() is not None


def delegate(command: str, argv: list[str]) -> None:
    """Replace this process with `<root>/current`'s launcher when that is sound; else return."""
    if _delegation_disabled(argv, command):
        return
    found = current_launcher(command)
    if found is None:
        return
    root, launcher, version = found
    if version != VERSION and command != "lean-beam-mcp":
        sys.stderr.write(
            f"{command}: this {command} is {VERSION} but the installed runtime is {version}; "
            "running the installed one (run `lean-beam install` to install this version)\n"
        )
        sys.stderr.flush()
    os.environ[layout.ROOT_ENV] = root
    try:
        os.execv(launcher, [launcher, *argv[1:]])
    except OSError:
        return


def _print_version(name: str) -> int:
    sys.stdout.write(identity.format_identity(identity.runtime_identity(name)))
    sys.stdout.flush()
    return 0


def _run_main(command: str) -> int:
    import importlib
    import json

    from beam_runtime.errors import system_error

    module_name, function = MAINS[command].split(":")
    # The error every command reports for a MemoryError, made before anything runs: when
    # memory is gone, building even this could fail.
    error = system_error(MemoryError(), command)
    oom_json = (json.dumps(error.to_json()) + "\n").encode()
    oom_text = (error.to_text() + "\n").encode()
    try:
        result = getattr(importlib.import_module(module_name), function)()
    except MemoryError as exc:
        # The last resort, when reporting the error ran out of memory too: drop the frames
        # that hold the memory, then write bytes made in advance (no traceback, exit 1).
        exc.__traceback__ = None
        del exc
        os.write(2, oom_json if "--json" in sys.argv else oom_text)
        return 1
    return int(result or 0)


def run_lean_beam() -> int:
    if sys.argv[1:2] == ["--version"]:
        return _print_version("lean-beam")
    return _run_main("lean-beam")


def run_beam_cli() -> int:
    if sys.argv[1:2] == ["--version"]:
        return _print_version("beam-cli")
    return _run_main("beam-cli")


def run_lean_beam_mcp() -> int:
    return _run_main("lean-beam-mcp")


def lean_beam() -> int:
    delegate("lean-beam", sys.argv)
    return run_lean_beam()


def beam_cli() -> int:
    delegate("beam-cli", sys.argv)
    return run_beam_cli()


def lean_beam_mcp() -> int:
    delegate("lean-beam-mcp", sys.argv)
    return run_lean_beam_mcp()
