"""What a runtime's `bin/<command>` launcher runs once Python is up.

The launcher script starts the recorded interpreter with `-I -S -B` and runs the import gate
(`beam_runtime.bytecode_gate`), which puts the runtime's `site/` on `sys.path` behind a finder
that runs only recorded bytecode and calls `main` here with the runtime directory the launcher
found from its own real path. `main` takes the runtime's lease, then runs the command's entry
point with the user's arguments. It never delegates anywhere else.

Every process of a runtime starts here, so this module and what it imports stay stdlib-light
(no pathlib, typing or BeamError: `--version` through a launcher costs little more than Python).
"""

from __future__ import annotations

import os
import sys

from beam_runtime.layout import COMMANDS, ROOT_ENV
from beam_runtime.leases import LeaseRefused, acquire_shared


def command_argv(runtime_dir: str, command: str, user_args: list[str]) -> list[str]:
    """`sys.argv` for the entry point.

    lean-beam-mcp gets its own runtime's beam-cli before the user's arguments, so a `--beam-cli`
    given by the user comes later and wins.
    """
    argv = [os.path.join(runtime_dir, "bin", command)]
    if command == "lean-beam-mcp":
        argv += ["--beam-cli", os.path.join(runtime_dir, "bin", COMMANDS[2])]
    return argv + user_args


def main(runtime_dir: str, command: str, entry: str) -> None:
    """Run `entry` (`module:function`) for `command` of the runtime at `runtime_dir`.

    `sys.argv` is `["-c", <launcher path>, *user args]` when this is called.
    """
    runtime_dir = str(runtime_dir)
    root = os.path.dirname(os.path.dirname(runtime_dir))
    try:
        # The descriptor stays open for the life of the process: that is the lease.
        acquire_shared(root, os.path.basename(runtime_dir))
    except LeaseRefused as refusal:
        sys.stderr.write(f"{command}: {refusal.message}\n")
        raise SystemExit(1) from None
    os.environ.setdefault(ROOT_ENV, root)
    sys.argv = command_argv(runtime_dir, command, sys.argv[2:])
    module_name, function = entry.split(":")
    import importlib

    raise SystemExit(getattr(importlib.import_module(module_name), function)())
