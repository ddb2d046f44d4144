"""`lean-beam version` and `beam-cli version`: the identity of the running code."""

from __future__ import annotations

import sys
from typing import Any

import click

from beam_runtime.cli.output import emit
from beam_runtime.identity import format_identity, runtime_identity


class IdentityResult:
    def __init__(self, identity: dict[str, Any]) -> None:
        self.identity = identity

    def to_json(self) -> dict[str, Any]:
        return dict(self.identity)

    def to_text(self) -> str:
        return format_identity(self.identity)


def _show(name: str, as_json: bool) -> None:
    emit(IdentityResult(runtime_identity(name)), as_json)
    sys.stdout.flush()


@click.command("version")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def version(as_json: bool) -> None:
    """Print the identity of this lean-beam: version, runtime, install root, interpreter."""
    _show("lean-beam", as_json)


@click.command("version")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def beam_cli_version(as_json: bool) -> None:
    """Print the identity of this beam-cli."""
    _show("beam-cli", as_json)
