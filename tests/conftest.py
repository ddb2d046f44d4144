"""Shared fixtures for every test area.

- `beam_venv` (session): a wheel built from a copy of this checkout, installed into ONE temporary
  venv per test run. Its `bin/lean-beam`, `bin/lean-beam-mcp` and `bin/beam-cli`
  are the console scripts a pipx/uv/pip user would have.
- `fresh_home` (function): a `tests.support.installed.BeamHome` with an empty temporary HOME and
  nothing installed. `.run(argv)` runs a command with only HOME, PATH=/usr/bin:/bin, USER,
  SHELL, TERM and LOGNAME (keyword arguments add variables); `.install(*args)` runs
  `lean-beam install` through the venv's console script.
- `installed_root` (function): a `tests.support.installed.Installed`: like `fresh_home`, after a
  real `lean-beam install` into the default root `~/.local/share/beam`. Exposes `root`,
  `runtime_id`, `runtime_dir`, `wrapper(cmd)` (`<root>/bin/cmd`), `launcher(cmd)`
  (`versions/<id>/bin/cmd`) and the same `run`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.installed import BeamHome, Installed, install_fresh
from tests.support.installed import fresh_home as make_home
from tests.support.venv import wheel_venv


@pytest.fixture(scope="session")
def beam_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield wheel_venv(tmp_path_factory.mktemp("beam-wheel-venv"))


@pytest.fixture
def fresh_home(tmp_path: Path, beam_venv: Path) -> BeamHome:
    return make_home(tmp_path, beam_venv)


@pytest.fixture
def installed_root(tmp_path: Path, beam_venv: Path) -> Installed:
    return install_fresh(tmp_path, beam_venv)
