"""A launcher waiting for its lease while the runtime is pruned and republished under the same id
must end on the new lease file, never on the old one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from beam_runtime.leases import lease_is_held
from tests.support.installed import Installed

EXCLUSIVE = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
"""


def open_files(pid: int) -> set[str]:
    try:
        return {os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()}
    except (FileNotFoundError, ProcessLookupError):
        return set()


def wait_until(condition, proc: subprocess.Popen[bytes], what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 60
    while not condition():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_waiting_launcher_ends_on_the_republished_lease(installed_root: Installed) -> None:
    root, runtime_id = installed_root.root, installed_root.runtime_id
    lease = root / "state" / "leases" / f"{runtime_id}.lease"
    holder = subprocess.Popen(
        [sys.executable, "-c", EXCLUSIVE, str(lease)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    server = subprocess.Popen(
        [installed_root.launcher("lean-beam-mcp")],
        env=installed_root.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        try:
            wait_until(
                lambda: str(lease) in open_files(server.pid),
                server,
                "the launcher never opened its lease",
            )
            # prune's part, then a reinstall of the same id: new directory, new lease file
            trash = root / "state" / "trash" / f"{runtime_id}.test"
            trash.parent.mkdir(exist_ok=True)
            os.rename(installed_root.runtime_dir, trash)
            lease.unlink()
            shutil.copytree(trash, installed_root.runtime_dir, symlinks=True)
            lease.touch()
        finally:
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(timeout=30)
        # Either outcome is right: the launcher noticed the prune and stopped with
        # "was pruned; restart", or it ended on the new lease file; never on the old one.
        deadline = time.monotonic() + 60
        while server.poll() is None and not lease_is_held(root, runtime_id):
            assert time.monotonic() < deadline, "the launcher neither stopped nor took the lease"
            time.sleep(0.01)
        files = open_files(server.pid)
        if server.poll() is None:  # still running after its files were read: it holds a lease
            assert str(lease) in files
            assert f"{lease} (deleted)" not in files  # the old lease file is not held
    finally:
        out, err = server.communicate(timeout=60)
    if server.returncode != 0:
        assert server.returncode == 1 and b"was pruned; restart" in err, (out, err)
    assert not lease_is_held(root, runtime_id)


HOLD = (
    "import sys\nfrom pathlib import Path\nfrom beam_runtime.leases import hold_lease\n"
    "try:\n    hold_lease(Path(sys.argv[1]), sys.argv[2])\n"
    "except Exception as exc:\n    print('refused', exc); sys.exit(1)\nprint('held')\n"
)


@pytest.mark.parametrize("left", ["gone", "symlink"])
def test_a_lease_file_without_its_runtime_is_refused(
    installed_root: Installed, tmp_path: Path, left: str
) -> None:
    """Prune died between its rename and dropping the lease file: nobody may start on it."""
    aside = tmp_path / "aside"
    os.rename(installed_root.runtime_dir, aside)
    if left == "symlink":
        os.symlink(aside, installed_root.runtime_dir)
    root, runtime_id = installed_root.root, installed_root.runtime_id
    assert (root / "state" / "leases" / f"{runtime_id}.lease").is_file()
    done = subprocess.run(
        [sys.executable, "-c", HOLD, str(root), runtime_id],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stdout
    assert done.stdout.startswith("refused") and "was pruned; restart" in done.stdout


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_waiting_launcher_learns_of_the_prune_while_the_lease_is_held(
    installed_root: Installed,
) -> None:
    """Prune still holds the lease (it has not dropped the file yet): the launcher must not wait
    out its patience and call the runtime busy; its directory is gone, so it was pruned."""
    lease = installed_root.root / "state" / "leases" / f"{installed_root.runtime_id}.lease"
    holder = subprocess.Popen(
        [sys.executable, "-c", EXCLUSIVE, str(lease)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    try:
        launcher = subprocess.Popen(
            [installed_root.launcher("beam-cli"), "--version"],
            env=installed_root.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(
            lambda: str(lease) in open_files(launcher.pid),
            launcher,
            "the launcher never opened its lease",
        )
        trash = installed_root.root / "state" / "trash"
        trash.mkdir(exist_ok=True)
        os.rename(installed_root.runtime_dir, trash / f"{installed_root.runtime_id}.test")
        out, err = launcher.communicate(timeout=60)  # the lease is still held exclusively
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert launcher.returncode == 1 and out == ""
    assert "was pruned; restart" in err and "being pruned" not in err
