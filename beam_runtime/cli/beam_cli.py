"""`beam-cli`: the runtime's helper CLI (`mcp-config`, `version`)."""

from __future__ import annotations

import click

from beam_runtime.cli.lazy import LazyGroup


@click.group(
    cls=LazyGroup,
    lazy={
        "mcp-config": "beam_runtime.cli.cmd_mcp_config:mcp_config",
        "version": "beam_runtime.cli.cmd_version:beam_cli_version",
    },
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option("--root", type=click.Path(), default=None, help="Lean project root.")
@click.pass_context
def main(ctx: click.Context, root: str | None) -> None:
    """beam-cli: resolves Lean projects for lean-beam-mcp."""
    ctx.obj = {"root": root}
