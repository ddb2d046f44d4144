"""`lean-beam install`: thin click front end over `beam_install.install`."""

from __future__ import annotations

import click

from beam_runtime.cli.output import emit, fail
from beam_runtime.errors import BeamError


@click.command("install")
@click.option(
    "--install-root",
    type=str,
    default=None,
    help="Install root (default: platform data dir + beam).",
)
@click.option(
    "--bin-dir", type=str, default=None, help="Where to link the commands (default: ~/.local/bin)."
)
@click.option(
    "--dry-run", is_flag=True, help="Show what would happen; write nothing, take no lock."
)
@click.option(
    "--lock-timeout",
    type=click.FloatRange(min=0),
    default=120.0,
    show_default=True,
    help="Seconds to wait for another install or prune to finish.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def install(
    install_root: str | None, bin_dir: str | None, dry_run: bool, lock_timeout: float, as_json: bool
) -> None:
    """Copy this lean-beam and its dependencies into an immutable runtime and make it current."""
    from beam_install.install import install as run_install

    try:
        result = run_install(install_root, bin_dir, dry_run=dry_run, lock_timeout=lock_timeout)
    except BeamError as error:
        fail(error, as_json)
    emit(result, as_json)
