"""A click group whose subcommands are imported only when they run (fast start)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping

import click

Loader = Callable[[], click.Command]


class LazyGroup(click.Group):
    """Maps command names to loaders: functions that import the command and return it.

    Each loader holds a plain `from ... import ...` statement, so the import checker sees every
    edge while the command's module still loads only when that command runs.
    """

    def __init__(
        self, *args: object, lazy: Mapping[str, Loader] | None = None, **kwargs: object
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def invoke(self, ctx: click.Context) -> object:
        """Runs the command; an ``OSError`` or ``MemoryError`` it lets escape (a full disk, a
        read-only file system, a denied path) becomes a categorized error, never a traceback."""
        try:
            return super().invoke(ctx)
        except (OSError, MemoryError) as exc:
            exc.__traceback__ = None  # its frames may hold what used the memory up: let them go
            from beam_runtime.cli.output import fail
            from beam_runtime.errors import system_error

            words = [ctx.info_name or "lean-beam", *sys.argv[1:]]
            doing = " ".join(w for w in words[:3] if not w.startswith("-"))
            fail(system_error(exc, doing), "--json" in words)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        loader = self.lazy.get(cmd_name)
        if loader is not None:
            return loader()
        return super().get_command(ctx, cmd_name)
