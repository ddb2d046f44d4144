"""`lean-beam doctor [--client NAME] [--json]`: prints its report; exit 1 when broken."""

from __future__ import annotations

import os
from pathlib import Path

import click

from beam_install.cli.client_names import ALIAS_HELP, ClientName
from beam_runtime.cli.output import emit


@click.command("doctor")
@click.option("--install-root", default=None, help="Install root (default: BEAM_INSTALL_ROOT).")
@click.option(
    "--client",
    type=ClientName(),
    default=None,
    help="Check only this client's registrations, by running their stored command as the "
    "client does, and its trust and approval state. " + ALIAS_HELP,
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def doctor(install_root: str | None, client: str | None, as_json: bool) -> None:
    """Check the installation, client registrations, the Lean toolchain and a live MCP run."""
    from beam_install.doctor import run_doctor

    report = run_doctor(install_root, cwd=Path(os.getcwd()), env=os.environ, client=client)
    emit(report, as_json)
    if not report.ok:
        raise SystemExit(1)
