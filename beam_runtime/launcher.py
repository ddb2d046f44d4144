"""What a runtime's `bin/<command>` launcher runs once Python is up (decision 7).

The launcher script starts the recorded interpreter with `-I -S -B`, puts only the runtime's
`site/` on `sys.path` and calls `main` here with the runtime directory it found from its own real
path. `main` takes the runtime's lease, then runs the command's entry point with the user's
arguments. It never delegates anywhere else.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from beam_runtime.errors import BeamError
from beam_runtime.layout import COMMANDS, ROOT_ENV, launcher_path
from beam_runtime.leases import hold_lease


def command_argv(runtime_dir: Path, command: str, user_args: list[str]) -> list[str]:
    """`sys.argv` for the entry point.

    lean-beam-mcp gets its own runtime's beam-cli before the user's arguments, so a `--beam-cli`
    given by the user comes later and wins.
    """
    argv = [str(launcher_path(runtime_dir, command))]
    if command == "lean-beam-mcp":
        argv += ["--beam-cli", str(launcher_path(runtime_dir, COMMANDS[2]))]
    return argv + user_args


def main(runtime_dir: str, command: str, entry: str) -> None:
    """Run `entry` (`module:function`) for `command` of the runtime at `runtime_dir`.

    `sys.argv` is `["-c", <launcher path>, *user args]` when this is called.
    """
    runtime = Path(runtime_dir)
    try:
        # The descriptor stays open for the life of the process: that is the lease.
        hold_lease(runtime.parent.parent, runtime.name)
        if not runtime.is_dir():
            raise BeamError("runtimePruned", "runtime was pruned; restart", "restart the client")
    except BeamError as error:
        sys.stderr.write(f"{command}: {error.message}\n")
        raise SystemExit(1) from None
    os.environ.setdefault(ROOT_ENV, str(runtime.parent.parent))
    sys.argv = command_argv(runtime, command, sys.argv[2:])
    module_name, function = entry.split(":")
    raise SystemExit(getattr(importlib.import_module(module_name), function)())
