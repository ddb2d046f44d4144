"""Killed installers, concurrent installers and a held lock, with real processes.

Before each fault, `current` is a valid variant of the wheel's runtime (derived with
`tests/runtime/trees.py`, one extra payload file) and the wheel's own runtime is gone, so the
install that gets killed always stages a new runtime.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from beam_install.install import FAILPOINTS
from beam_runtime.layout import STATE_ENTRIES
from beam_runtime.record_check import full_problem
from tests.support.installed import BeamHome, Installed, Result, current_is_a_variant


def current_identity(beam: BeamHome, root: Path) -> dict[str, object]:
    """The identity that `<root>/current`'s launcher reports (it must run)."""
    target = os.readlink(root / "current")
    done = beam.run([str(root / target / "bin" / "lean-beam"), "version", "--json"])
    assert done.code == 0, done.stderr
    identity = done.json()
    assert identity["runtime_current"] is True
    assert identity["runtime_error"] is None
    return dict(identity)


def assert_clean_and_valid(root: Path, runtime_id: str) -> None:
    assert os.readlink(root / "current") == f"versions/{runtime_id}"
    assert full_problem(root / "versions" / runtime_id) is None
    assert list((root / "state" / "staging").iterdir()) == []
    assert not list(root.glob(".current.tmp-*"))
    assert not list((root / "bin").glob(".*"))
    assert {p.name for p in (root / "state").iterdir()} <= STATE_ENTRIES


@pytest.fixture
def prior(installed_root: Installed) -> tuple[BeamHome, str, str]:
    """A HOME whose current runtime differs from the wheel's, and the wheel's runtime id."""
    return installed_root, *current_is_a_variant(installed_root)


@pytest.mark.parametrize("step", FAILPOINTS)
def test_killed_at_each_step(prior: tuple[BeamHome, str, str], step: str) -> None:
    beam, prior_id, new_id = prior
    root = beam.default_root
    killed = beam.install("--json", BEAM_INSTALL_FAILPOINT=step)
    assert killed.code == -signal.SIGKILL, killed.stderr
    assert killed.stdout == ""
    identity = current_identity(beam, root)
    expected = new_id if step == "current-switched" else prior_id
    assert identity["runtime_id"] == expected
    wrapper = beam.run([str(root / "bin" / "lean-beam"), "version", "--json"])
    assert wrapper.code == 0, wrapper.stderr
    assert wrapper.json()["runtime_id"] == expected
    done = beam.install("--json")
    assert done.code == 0, done.stderr
    body = done.json()
    if step in ("staging-copied", "manifest-written", "current-tmp"):
        assert body["cleaned"], "the stale stage or link was not reported"
    assert_clean_and_valid(root, new_id)
    assert current_identity(beam, root)["runtime_id"] == new_id


def copy_root(source: Path, target: Path) -> None:
    """A copy of an install root, re-owned by its new path (test set-up only)."""
    shutil.copytree(source, target, symlinks=True)
    marker = target / ".lean-beam-install-root"
    os.chmod(marker, 0o644)
    marker.write_text(json.dumps({"owner": "lean-beam", "schema": 1, "root": str(target)}))


# Moments of an install the test can see from outside; each trial kills at one of them.
KILL_POINTS = ("locked", "staging", "published")


def kill_at(proc: subprocess.Popen[bytes], root: Path, new_id: str, point: str) -> None:
    """Wait (bounded) until the install reached `point`, or ended on its own."""

    def reached() -> bool:
        if point == "locked":
            return (root / "state" / "install.lock.json").exists()
        if point == "staging":
            staging = root / "state" / "staging"
            return staging.is_dir() and any(staging.iterdir())
        return (root / "versions" / new_id).exists()

    deadline = time.monotonic() + 120
    while not reached() and proc.poll() is None:
        assert time.monotonic() < deadline, f"the install never reached {point}"
        time.sleep(0.001)


def test_random_delay_kills(prior: tuple[BeamHome, str, str], tmp_path: Path) -> None:
    beam, prior_id, new_id = prior
    rng = random.Random(int(os.environ.get("BEAM_TEST_SEED", "20261130")))
    for trial in range(5):
        root = tmp_path / f"trial-{trial}"
        copy_root(beam.default_root, root)
        args = ["--install-root", str(root), "--bin-dir", str(tmp_path / f"bin-{trial}")]
        proc = subprocess.Popen(
            [beam.console("lean-beam"), "install", *args],
            env=beam.env(),
            cwd=beam.home,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        kill_at(proc, root, new_id, rng.choice(KILL_POINTS))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        assert current_identity(beam, root)["runtime_id"] in (prior_id, new_id)
        done = beam.run([beam.console("lean-beam"), "install", "--json", *args])
        assert done.code == 0, done.stderr
        assert_clean_and_valid(root, new_id)


def test_concurrent_installs_serialize(fresh_home: BeamHome) -> None:
    procs = [
        subprocess.Popen(
            [fresh_home.console("lean-beam"), "install", "--json"],
            env=fresh_home.env(),
            cwd=fresh_home.home,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        results.append(Result(proc.returncode, out, err))
    assert [r.code for r in results] == [0, 0, 0, 0], [r.stderr for r in results]
    bodies = [r.json() for r in results]
    actions = sorted(b["runtime"]["action"] for b in bodies)
    assert actions == ["created", "reused", "reused", "reused"]
    (runtime_id,) = {b["runtime"]["id"] for b in bodies}
    root = fresh_home.default_root
    assert [p.name for p in (root / "versions").iterdir()] == [runtime_id]
    assert_clean_and_valid(root, runtime_id)


HOLDER = """
import sys, time
from pathlib import Path
from beam_install.lock import install_lock
with install_lock(Path(sys.argv[1]), timeout=5, command="lock-holder-test"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_lock_timeout_names_the_holder(installed_root: BeamHome) -> None:
    root = installed_root.default_root
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        done = installed_root.install("--lock-timeout", "0.5", "--json")
        assert done.code == 1, done.stderr
        error = done.error()
        assert error["category"] == "lockTimeout"
        assert f"pid {holder.pid}" in error["message"]
        assert "lock-holder-test" in error["message"]
        dry = installed_root.install("--dry-run", "--json", "--lock-timeout", "0")
        assert dry.code == 0, dry.stderr  # a dry run takes no lock
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert installed_root.install("--lock-timeout", "5").code == 0
