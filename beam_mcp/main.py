"""The `lean-beam-mcp` command line.

argparse rather than click: an MCP client waits for this process's first answer, and click adds
tens of milliseconds of imports to every start (the whole start has a 150 ms budget,
docs/PERFORMANCE.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from beam_mcp.settings import (
    HOST_ENV,
    HOST_IDLE_ENV,
    HOST_MODES,
    KNOBS,
    MEMORY_BUDGET_ENV,
    SELF_CHECK_TIMEOUT_ENV,
    WORKER_MEMORY_ENV,
    SettingsError,
    build_settings,
)

PROG = "lean-beam-mcp"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Stdio MCP server that lets agents work on Lean 4 projects. Every flag "
        "below also reads LEAN_BEAM_MCP_<NAME> from the environment when the flag is absent.",
    )
    p.add_argument(
        "--beam-cli", metavar="PATH", help="beam-cli used to configure each workspace (mcp-config)"
    )
    p.add_argument(
        "--lean-cmd",
        metavar="CMD",
        help="command line that starts a Lean language server in the workspace "
        "root, split like a shell would; overrides --beam-cli",
    )
    p.add_argument("--lean-plugin", metavar="PATH", help="Lean server plugin to load")
    p.add_argument("--log-file", metavar="PATH", help="append operational log lines to this file")
    p.add_argument(
        "--backend",
        metavar="PATH.py:FACTORY",
        help="run tools on another backend than the Lean broker (a test hook): "
        "FACTORY(settings) from a Python file or module:factory",
    )
    p.add_argument(
        "--host",
        choices=HOST_MODES,
        default=None,
        help=f"share one Lean host per workspace with other agents: auto (default; in-process "
        f"when no host can be reached), off, or required ({HOST_ENV})",
    )
    p.add_argument(
        "--host-idle-s",
        metavar="N",
        default=None,
        help=f"a shared host exits N seconds after its last agent left, and closes documents "
        f"unused that long (default 600; {HOST_IDLE_ENV})",
    )
    p.add_argument(
        "--memory-budget",
        metavar="SIZE",
        default=None,
        help="bytes (or with K, M, G) all Lean processes of this user may use before a new "
        f"Lean worker is refused (default 60%% of physical memory; {MEMORY_BUDGET_ENV})",
    )
    p.add_argument(
        "--worker-memory-max",
        metavar="SIZE",
        default=None,
        help="address-space limit (bytes, or with K, M, G) of each Lean server process tree; "
        f"a worker that dies of it answers workerOutOfMemory (default none; {WORKER_MEMORY_ENV})",
    )
    for knob in KNOBS:
        p.add_argument(
            knob.flag, metavar="N", default=None, help=f"{knob.help} (default {knob.default})"
        )
    p.add_argument("--version", action="store_true", help="print the identity and exit")
    p.add_argument(
        "--self-check",
        nargs="?",
        const="",
        default=None,
        metavar="FILE",
        help="start a child server, check it end to end (and lean_sync FILE "
        f"from the current directory), then exit; per-phase timeout from "
        f"{SELF_CHECK_TIMEOUT_ENV}",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        settings = build_settings(vars(args), os.environ)
    except SettingsError as exc:
        parser().error(str(exc))  # exits 2
    if settings.lean_plugin is not None and not os.path.isfile(settings.lean_plugin):
        from beam_runtime.errors import BeamError

        err = BeamError(
            "invalidInput",
            f"--lean-plugin does not name a file: {settings.lean_plugin}",
            "pass the path of an existing plugin file",
        )
        sys.stderr.write(err.to_text() + "\n")
        return 1
    if args.version:
        return print_version(settings.beam_cli)
    if args.self_check is not None:
        from beam_mcp.selfcheck import run_self_check

        return run_self_check(settings, args.self_check or None)
    from beam_mcp.server import Server

    _log(settings.log_file, "started")
    code = Server(settings).run()
    _log(settings.log_file, "stopped")
    _release_stdio()
    return code


def _release_stdio() -> None:
    """Point stdout and stderr at /dev/null once everything is written, so the client sees EOF
    now: a read still stuck in the kernel (a hung NFS or FUSE mount) keeps this process from
    exiting, and with it the pipes, until the mount answers."""
    import contextlib

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            os.dup2(devnull, fd)
    os.close(devnull)


def print_version(beam_cli: str | None) -> int:
    from beam_runtime.identity import MCP_PROTOCOL, format_identity, runtime_identity

    ident = runtime_identity(PROG, beam_cli=beam_cli)
    ident["mcp_protocol"] = MCP_PROTOCOL
    sys.stdout.write(format_identity(ident))
    return 0


def _log(path: str | None, event: str) -> None:
    if path is None:
        return
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {PROG}[{os.getpid()}] {event}\n")
    except OSError:
        pass  # a log file that cannot be written must not stop the server
