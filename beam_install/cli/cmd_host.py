"""`lean-beam host list [--json]` and `lean-beam host stop --root DIR | --all`."""

from __future__ import annotations

import click

from beam_runtime.cli.output import emit


@click.group("host")
def host() -> None:
    """The shared Lean hosts of this user (docs/HOST.md)."""


@host.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def list_command(as_json: bool) -> None:
    """Every live host: root, toolchain, runtime, pid, agents, documents, Lean processes, PSS."""
    from beam_runtime.host.listing import HostListing, live_hosts

    emit(HostListing(live_hosts()), as_json)


@host.command("stop")
@click.option("--root", "root", default=None, help="Stop the hosts of this workspace root.")
@click.option("--all", "every", is_flag=True, help="Stop every host.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def stop_command(root: str | None, every: bool, as_json: bool) -> None:
    """Stop hosts: their agents' calls in flight answer backendRestarted, the next call starts
    a new host. Exit 1 when one did not stop."""
    from beam_runtime.host.listing import canonical, live_hosts, stop_hosts

    if (root is None) != every:  # exactly one of them
        raise click.UsageError("name the hosts to stop: --root DIR or --all")
    hosts = live_hosts()
    if root is not None:
        wanted = canonical(root)
        hosts = [h for h in hosts if h["root"] == wanted]
    result = stop_hosts(hosts)
    emit(result, as_json)
    if result.failed:
        raise SystemExit(1)
