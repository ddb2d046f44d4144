"""`beam-cli`: the runtime's helper CLI (`mcp-config`, `version`)."""

from __future__ import annotations

import click

from beam_runtime.cli.lazy import LazyGroup


def _mcp_config() -> click.Command:
    from beam_runtime.cli.cmd_mcp_config import mcp_config

    return mcp_config


def _version() -> click.Command:
    from beam_runtime.cli.cmd_version import beam_cli_version

    return beam_cli_version


@click.group(
    cls=LazyGroup,
    lazy={"mcp-config": _mcp_config, "version": _version},
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option("--root", type=click.Path(), default=None, help="Lean project root.")
@click.pass_context
def main(ctx: click.Context, root: str | None) -> None:
    """beam-cli: resolves Lean projects for lean-beam-mcp."""
    ctx.obj = {"root": root}
