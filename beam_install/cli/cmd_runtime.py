"""`lean-beam runtime list|prune`."""

from __future__ import annotations

import json
import os
import sys

import click

from beam_runtime.cli.output import emit, fail
from beam_runtime.errors import BeamError, system_error


@click.group("runtime")
def runtime() -> None:
    """List and prune the installed runtimes."""


@runtime.command("list")
@click.option("--install-root", default=None, help="Install root (default: BEAM_INSTALL_ROOT).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def list_command(install_root: str | None, as_json: bool) -> None:
    """Every runtime: id, version, created, size, and what holds on to it."""
    from beam_runtime.layout import resolve_install_root
    from beam_runtime.listing import list_runtimes

    try:
        root = resolve_install_root(install_root)
        listing = list_runtimes(root, os.environ)
    except BeamError as error:
        fail(error, as_json)
    emit(listing, as_json)


@runtime.command("prune")
@click.option(
    "--keep-latest",
    type=click.IntRange(0, 64),
    default=2,
    show_default=True,
    help="How many of the newest unused runtimes to keep.",
)
@click.option("--dry-run", is_flag=True, help="Only show what would be removed (the default).")
@click.option("--yes", is_flag=True, help="Really remove the runtimes the plan lists.")
@click.option(
    "--lock-timeout",
    type=click.FloatRange(0, 3600),
    default=10.0,
    show_default=True,
    help="Seconds to wait for a running install or prune.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def prune_command(
    keep_latest: int, dry_run: bool, yes: bool, lock_timeout: float, as_json: bool
) -> None:
    """Remove old runtimes that are not current, active or referenced (a dry run unless --yes)."""
    from beam_install.prune import PruneResult, pruning_root, run_prune
    from beam_runtime.identity import locate_runtime

    apply = yes and not dry_run
    flags = _given_flags(click.get_current_context())

    def planned(result: PruneResult) -> None:
        result.flags = flags
        if not as_json:
            _say(result.header_text())

    def removed(runtime_id: str) -> None:
        if not as_json:
            _say(f"removed: {runtime_id}")

    root = None
    try:
        root = pruning_root()
        location = locate_runtime()
        result = run_prune(
            root,
            keep_latest=keep_latest,
            apply=apply,
            env=os.environ,
            on_removed=removed,
            on_planned=planned,
            running_id=location.runtime_id if location else None,
            lock_timeout=lock_timeout,
        )
    except BeamError as refusal:  # a refusal prints nothing on stdout (docs/RUNTIME.md)
        fail(refusal, as_json)
    except (OSError, MemoryError) as exc:  # the system failed it: still one final object
        failure = system_error(exc, "lean-beam runtime prune")
        if not as_json:
            fail(failure, as_json)
        result = PruneResult.failed(root, dry_run=not apply, keep_latest=keep_latest, error=failure)
    if as_json:
        sys.stdout.write(json.dumps({"schema": 1, **result.to_json()}, indent=2) + "\n")
    else:
        _say(result.summary_text())
    if result.error is not None:
        # --json: the final object above, and the error object on stderr as every failure has
        sys.stderr.write(
            (json.dumps(result.error.to_json()) if as_json else result.error.to_text()) + "\n"
        )
        raise SystemExit(1)


def _given_flags(ctx: click.Context) -> list[str]:
    """The options given on the command line, spelled so a hint can repeat them."""
    flags = []
    for param in ctx.command.params:
        if not isinstance(param, click.Option) or param.name is None:
            continue
        if ctx.get_parameter_source(param.name) != click.core.ParameterSource.COMMANDLINE:
            continue
        value = ctx.params[param.name]
        if param.is_flag:
            flags.append(param.opts[0])
        else:
            flags += [param.opts[0], str(value)]
    return flags


def _say(text: str) -> None:
    sys.stdout.write(text.rstrip("\n") + "\n")
    sys.stdout.flush()
