"""`lean-beam setup` and `lean-beam remove`: thin click front ends over `beam_install.setup`."""

from __future__ import annotations

import os
from pathlib import Path

import click

from beam_install.cli.client_names import ALIAS_HELP, ClientName
from beam_runtime.cli.output import emit, fail
from beam_runtime.errors import BeamError

_LOCK_HELP = "Seconds to wait for another setup, remove or uninstall."


@click.command("setup", epilog=ALIAS_HELP)
@click.argument("clients", nargs=-1, type=ClientName())
@click.option("--all", "all_clients", is_flag=True, help="Every supported client.")
@click.option(
    "--scope",
    type=click.Choice(["user", "project"]),
    default="user",
    show_default=True,
    help="User-wide config, or the project's own files.",
)
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Project directory for --scope project (default: the current directory).",
)
@click.option("--dry-run", is_flag=True, help="Print the plan; write nothing (the default).")
@click.option("--yes", is_flag=True, help="Apply the plan.")
@click.option("--refresh", is_flag=True, help="Rewrite only entries that are already ours.")
@click.option(
    "--force-unmanaged",
    is_flag=True,
    help="Replace a `lean-beam` entry that lean-beam did not write.",
)
@click.option("--install-root", default=None, help="Install root (default: BEAM_INSTALL_ROOT).")
@click.option(
    "--lock-timeout",
    type=click.FloatRange(0, 3600),
    default=30.0,
    show_default=True,
    help=_LOCK_HELP,
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def setup(
    clients: tuple[str, ...],
    all_clients: bool,
    scope: str,
    project: Path | None,
    dry_run: bool,
    yes: bool,
    refresh: bool,
    force_unmanaged: bool,
    install_root: str | None,
    lock_timeout: float,
    as_json: bool,
) -> None:
    """Register lean-beam-mcp with MCP clients (a plan unless --yes).

    Without CLIENT names or --all, the clients found on this machine are selected.
    """
    from beam_install.setup import SetupRequest, run_setup

    request = SetupRequest(list(clients), all_clients, scope, project, refresh, force_unmanaged)
    try:
        result = run_setup(
            install_root,
            request,
            apply=yes and not dry_run,
            env=os.environ,
            cwd=Path(os.getcwd()),
            lock_timeout=lock_timeout,
        )
    except BeamError as error:
        fail(error, as_json)
    emit(result, as_json)


@click.command("remove", epilog=ALIAS_HELP)
@click.argument("clients", nargs=-1, type=ClientName())
@click.option("--all", "all_clients", is_flag=True, help="Every supported client.")
@click.option("--dry-run", is_flag=True, help="Print the plan; write nothing (the default).")
@click.option("--yes", is_flag=True, help="Apply the plan.")
@click.option("--install-root", default=None, help="Install root (default: BEAM_INSTALL_ROOT).")
@click.option(
    "--lock-timeout",
    type=click.FloatRange(0, 3600),
    default=30.0,
    show_default=True,
    help=_LOCK_HELP,
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def remove(
    clients: tuple[str, ...],
    all_clients: bool,
    dry_run: bool,
    yes: bool,
    install_root: str | None,
    lock_timeout: float,
    as_json: bool,
) -> None:
    """Delete lean-beam's entries and skills from MCP client configs (a plan unless --yes)."""
    from beam_install.remove import run_remove
    from beam_install.setup import installed_root

    try:
        root = installed_root(install_root)
        result = run_remove(
            root,
            list(clients),
            all_clients,
            apply=yes and not dry_run,
            env=os.environ,
            lock_timeout=lock_timeout,
        )
    except BeamError as error:
        fail(error, as_json)
    emit(result, as_json)
