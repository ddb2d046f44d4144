"""`lean-beam uninstall [--yes] [--keep-root]`: thin front end over `beam_install.uninstall`."""

from __future__ import annotations

import os

import click

from beam_runtime.cli.output import emit, fail
from beam_runtime.errors import BeamError


@click.command("uninstall")
@click.option("--dry-run", is_flag=True, help="Print the plan; write nothing (the default).")
@click.option("--yes", is_flag=True, help="Apply the plan.")
@click.option(
    "--keep-root",
    is_flag=True,
    help="Keep the install root (runtimes); remove only registrations and links.",
)
@click.option("--install-root", default=None, help="Install root (default: BEAM_INSTALL_ROOT).")
@click.option(
    "--bin-dir", default=None, help="Where the command links are (default: ~/.local/bin)."
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def uninstall(
    dry_run: bool,
    yes: bool,
    keep_root: bool,
    install_root: str | None,
    bin_dir: str | None,
    as_json: bool,
) -> None:
    """Remove lean-beam's registrations, its command links and the install root."""
    from beam_install.uninstall import run_uninstall

    try:
        result = run_uninstall(
            install_root, bin_dir, apply=yes and not dry_run, keep_root=keep_root, env=os.environ
        )
    except BeamError as error:
        fail(error, as_json)
    emit(result, as_json)
