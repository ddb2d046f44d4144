"""Shared fixtures for every test area.

- `beam_venv` (session): a wheel built from a copy of this checkout, installed into ONE temporary
  venv per test run (under pytest-xdist the workers share it: the first builds it under a lock).
  Its `bin/lean-beam`, `bin/lean-beam-mcp` and `bin/beam-cli` are the console scripts a
  pipx/uv/pip user would have.
- `fresh_home` (function): a `tests.support.installed.BeamHome` with an empty temporary HOME and
  nothing installed. `.run(argv)` runs a command with only HOME, PATH=/usr/bin:/bin, USER,
  SHELL, TERM and LOGNAME (keyword arguments add variables); `.install(*args)` runs
  `lean-beam install` through the venv's console script.
- `host_sandbox` (autouse): a short socket directory of the test's own for shared Lean hosts
  (`XDG_RUNTIME_DIR`), a memory scope of its own (`LEAN_BEAM_MEMORY_SCOPE`: the budget counts
  only this test's Lean processes) and a 60 s host idle time; afterwards every host the test
  started is killed (`tests/support/hosts.py`). The Lean tool tests (below) run in both host
  modes: with the param `off` it sets `LEAN_BEAM_HOST=off`, with `shared` it leaves the
  variable as the run sets it; `LEAN_BEAM_HOST=off pytest ...` runs every test on the
  in-process broker, once.
- `installed_root` (function): a `tests.support.installed.Installed`: like `fresh_home`, after a
  real `lean-beam install` into the default root `~/.local/share/beam`. Exposes `root`,
  `runtime_id`, `runtime_dir`, `wrapper(cmd)` (`<root>/bin/cmd`), `launcher(cmd)`
  (`versions/<id>/bin/cmd`) and the same `run`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock

from tests.support.hosts import stop_hosts
from tests.support.installed import BeamHome, Installed, install_fresh
from tests.support.installed import fresh_home as make_home
from tests.support.venv import wheel_venv


@pytest.fixture(scope="session")
def beam_venv(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[Path]:
    if worker_id == "master":  # not under pytest-xdist
        yield wheel_venv(tmp_path_factory.mktemp("beam-wheel-venv"))
        return
    # Under pytest-xdist every worker has its own base temp directory below one shared parent:
    # the first worker builds the venv there under a lock, the others wait and reuse it.
    shared = tmp_path_factory.getbasetemp().parent / "beam-wheel-venv"
    built = shared / "built"  # holds the venv's path once the venv is complete
    with FileLock(str(shared) + ".lock"):
        if not built.exists():
            shutil.rmtree(shared, ignore_errors=True)
            shared.mkdir()
            built.write_text(str(wheel_venv(shared)))
    yield Path(built.read_text())


@pytest.fixture
def fresh_home(tmp_path: Path, beam_venv: Path) -> BeamHome:
    return make_home(tmp_path, beam_venv)


@pytest.fixture
def installed_root(tmp_path: Path, beam_venv: Path) -> Installed:
    return install_fresh(tmp_path, beam_venv)


@pytest.fixture(autouse=True)
def host_sandbox(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Path]:
    started = time.time()
    if getattr(request, "param", "shared") == "off":
        monkeypatch.setenv("LEAN_BEAM_HOST", "off")
    short = "/tmp" if os.path.isdir("/tmp") else None  # socket paths must stay short
    directory = tempfile.mkdtemp(prefix="lb", dir=short)
    monkeypatch.setenv("XDG_RUNTIME_DIR", directory)
    monkeypatch.setenv("LEAN_BEAM_MEMORY_SCOPE", directory)  # the budget counts this test's Lean
    monkeypatch.setenv("LEAN_BEAM_HOST_IDLE_S", "60")
    yield Path(directory)
    stop_hosts([directory, str(tmp_path_factory.getbasetemp())], started)
    shutil.rmtree(directory, ignore_errors=True)


# The Lean tool tests of these areas run in both host modes: the shared Lean host and the
# in-process broker must give the same answers (docs/HOST.md).
BOTH_MODES = ("broker", "speculative", "agent", "verify", "search")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that starts `lean-beam-mcp` on the fake Lean (the `servers` fixture) in one of
    `BOTH_MODES` runs twice, `[shared]` and `[off]`, in the same session (so the parallel
    workers share one pool of tests). Not when the run fixes `LEAN_BEAM_HOST`, and not for a
    module that runs its server in-process anyway (its own `_in_process` fixture). The
    shared-host tests themselves (`tests/host`) choose their mode per agent."""
    if "servers" not in metafunc.fixturenames or os.environ.get("LEAN_BEAM_HOST"):
        return
    area = Path(str(metafunc.definition.path)).parent.name
    if area in BOTH_MODES and not hasattr(metafunc.module, "_in_process"):
        metafunc.parametrize("host_sandbox", ["shared", "off"], indirect=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that start `lean-beam-mcp` on the fake Lean (the `servers` fixture) are marked
    `lean_server` (`-m lean_server` selects them; in the areas of `BOTH_MODES` each runs in
    both host modes), and the `slow` tests run first."""
    for item in items:
        if "servers" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.lean_server)
    # The long randomized runs first: started last, one of them would keep a worker busy after
    # the others ran out of tests (the order is otherwise kept).
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
