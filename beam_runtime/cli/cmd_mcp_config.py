"""`beam-cli [--root R] mcp-config [--lean-plugin PATH]`: always JSON, on stdout or stderr."""

from __future__ import annotations

import os
from pathlib import Path

import click

from beam_runtime.cli.output import emit, fail
from beam_runtime.errors import BeamError


@click.command("mcp-config")
@click.option(
    "--lean-plugin",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Lean plugin to load in the server (adds --plugin=PATH to lean_cmd).",
)
@click.pass_context
def mcp_config(ctx: click.Context, lean_plugin: str | None) -> None:
    """Print how lean-beam-mcp should start Lean for a project, as JSON."""
    from beam_runtime.mcp_config import build_mcp_config

    root = (ctx.obj or {}).get("root")
    try:
        config = build_mcp_config(
            root, cwd=Path(os.getcwd()), env=os.environ, lean_plugin=lean_plugin
        )
    except BeamError as error:
        fail(error, as_json=True)
    emit(config, as_json=True)
