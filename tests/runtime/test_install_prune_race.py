"""`lean-beam install` racing `lean-beam runtime prune` over the same runtime.

The runtime install would reuse is a prune candidate (not current). Prune is stopped at its final
re-check, holding `state/install.lock`; install starts and queues on the lock; then prune goes on
and removes the runtime. Install, once it has the lock, must see that the runtime is gone and
create it again: no traceback, no "reused" of a directory that is no longer there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from beam_install.current import switch_current
from beam_runtime.identity import runtime_error
from tests.runtime.clienv import client_env, dev_command
from tests.runtime.conftest import Installed
from tests.runtime.test_prune_rechecks import start_paused
from tests.runtime.trees import clone_runtime


def _tried_the_lock(trace: Path) -> bool:
    """Whether the traced install has tried `install.lock` and found it taken."""
    if not trace.exists():
        return False
    return any(
        "install.lock" in line and "EAGAIN" in line for line in trace.read_text().splitlines()
    )


def test_install_that_queued_behind_prune_recreates_the_pruned_runtime(
    installed: Installed, tmp_path: Path
) -> None:
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("needs strace (.ci/run installs it) to see install wait for the lock")
    target = installed.runtime_id
    newer = clone_runtime(
        installed.root, target, variant="newer", created_at="2030-01-01T00:00:00Z"
    )
    switch_current(installed.root, newer)  # `target` is now an unused runtime: a candidate
    paused = start_paused(installed, tmp_path, candidate=target)
    trace = tmp_path / "install.trace"
    traced = [strace, "-f", "-y", "-e", "trace=flock", "-o", str(trace)]
    bin_dir = installed.home / ".local" / "bin"
    install_argv = ["--install-root", str(installed.root), "--bin-dir", str(bin_dir), "--json"]
    install = subprocess.Popen(
        [*traced, dev_command("lean-beam"), "install", *install_argv],
        env=client_env(installed.home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not _tried_the_lock(trace):  # install now waits for the lock prune holds
        assert install.poll() is None, install.communicate()
        assert time.monotonic() < deadline, "install never reached the lock"
        time.sleep(0.01)
    assert paused.finish()["removed"] == [target]
    out, err = install.communicate(timeout=120)
    assert install.returncode == 0, err
    assert "Traceback" not in err, err
    runtime = json.loads(out)["runtime"]
    assert runtime["id"] == target and runtime["action"] == "created", runtime
    assert runtime_error(str(installed.versions() / target)) is None
    assert os.readlink(installed.root / "current") == f"versions/{target}"
