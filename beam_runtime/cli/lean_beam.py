"""`lean-beam`: install, version, runtime list/prune, doctor."""

from __future__ import annotations

import click

from beam_runtime.cli.lazy import LazyGroup


@click.group(
    cls=LazyGroup,
    lazy={
        "install": "beam_runtime.cli.cmd_install:install",
        "version": "beam_runtime.cli.cmd_version:version",
        "runtime": "beam_runtime.cli.cmd_runtime:runtime",
        "doctor": "beam_runtime.cli.cmd_doctor:doctor",
    },
    context_settings={"help_option_names": ["-h", "--help"]},
)
def main() -> None:
    """lean-beam: install and manage the lean-beam runtimes that AI agents use for Lean 4."""
