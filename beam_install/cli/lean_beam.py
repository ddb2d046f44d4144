"""`lean-beam`: install, setup, remove, uninstall, version, runtime list/prune, doctor, lean,
host list/stop."""

from __future__ import annotations

import click

from beam_runtime.cli.lazy import LazyGroup


def _install() -> click.Command:
    from beam_install.cli.cmd_install import install

    return install


def _version() -> click.Command:
    from beam_runtime.cli.cmd_version import version

    return version


def _runtime() -> click.Command:
    from beam_install.cli.cmd_runtime import runtime

    return runtime


def _doctor() -> click.Command:
    from beam_install.cli.cmd_doctor import doctor

    return doctor


def _lean() -> click.Command:
    from beam_install.cli.cmd_lean import lean

    return lean


def _host() -> click.Command:
    from beam_install.cli.cmd_host import host

    return host


def _setup() -> click.Command:
    from beam_install.cli.cmd_setup import setup

    return setup


def _remove() -> click.Command:
    from beam_install.cli.cmd_setup import remove

    return remove


def _uninstall() -> click.Command:
    from beam_install.cli.cmd_uninstall import uninstall

    return uninstall


@click.group(
    cls=LazyGroup,
    lazy={
        "install": _install,
        "setup": _setup,
        "remove": _remove,
        "uninstall": _uninstall,
        "version": _version,
        "runtime": _runtime,
        "doctor": _doctor,
        "lean": _lean,
        "host": _host,
    },
    context_settings={"help_option_names": ["-h", "--help"]},
)
def main() -> None:
    """lean-beam: install and manage the lean-beam runtimes that AI agents use for Lean 4."""
