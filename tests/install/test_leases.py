"""Runtime leases through real launchers: held for life, refused after a prune, and never
refused because someone probed the lease at the wrong moment.

A lease probe (`lease_is_held`, run by `runtime list`, prune's plan and doctor) takes LOCK_EX for
a moment. A launcher starting in that moment must wait for it, and exit 1 ("runtime was pruned;
restart") only when its directory has really left `versions/<id>`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
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

needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


def lease(installed: Installed) -> Path:
    return installed.root / "state" / "leases" / f"{installed.runtime_id}.lease"


class ExclusiveHolder:
    """A real process holding LOCK_EX on a lease (as prune does) until `release`."""

    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", EXCLUSIVE, str(path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.proc.stdout is not None and self.proc.stdout.readline() == "held\n"

    def release(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def wait_until_waiting_on(proc: subprocess.Popen[str], path: Path) -> None:
    """Block until `proc` has the lease file open, i.e. it is retrying its shared lock."""
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, proc.communicate()
        try:
            targets = {os.readlink(fd) for fd in Path(f"/proc/{proc.pid}/fd").iterdir()}
        except (FileNotFoundError, ProcessLookupError):
            targets = set()
        if str(path) in targets:
            return
        assert time.monotonic() < deadline, "the launcher never opened its lease"
        time.sleep(0.01)


def start(installed: Installed, command: str = "beam-cli") -> subprocess.Popen[str]:
    return subprocess.Popen([installed.launcher(command), "--version"], env=installed.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def test_launcher_refuses_a_runtime_without_its_lease_file(installed_root: Installed) -> None:
    lease(installed_root).unlink()
    done = installed_root.run([installed_root.launcher("lean-beam"), "--version"])
    assert done.code == 1
    assert "was pruned; restart" in done.stderr
    assert done.stdout == ""


@needs_proc
def test_launcher_waits_out_a_brief_exclusive_hold(installed_root: Installed) -> None:
    holder = ExclusiveHolder(lease(installed_root))
    launcher = start(installed_root)
    try:
        wait_until_waiting_on(launcher, lease(installed_root))
    finally:
        holder.release()
    out, err = launcher.communicate(timeout=60)
    assert launcher.returncode == 0, err
    assert f"runtime_id: {installed_root.runtime_id}" in out.splitlines()


@needs_proc
def test_launcher_exits_when_its_runtime_is_pruned_while_it_waits(
    installed_root: Installed,
) -> None:
    holder = ExclusiveHolder(lease(installed_root))
    launcher = start(installed_root)
    try:
        wait_until_waiting_on(launcher, lease(installed_root))
        trash = installed_root.root / "state" / "trash"
        trash.mkdir(exist_ok=True)
        os.rename(installed_root.runtime_dir, trash / f"{installed_root.runtime_id}.test")
        lease(installed_root).unlink()
    finally:
        holder.release()
    out, err = launcher.communicate(timeout=60)
    assert launcher.returncode == 1
    assert "was pruned; restart" in err
    assert out == ""


def test_launcher_gives_up_on_an_exclusive_hold_that_never_ends(installed_root: Installed) -> None:
    holder = ExclusiveHolder(lease(installed_root))
    try:
        done = installed_root.run([installed_root.wrapper("beam-cli"), "--version"])
    finally:
        holder.release()
    assert done.code == 1
    assert "being pruned" in done.stderr and "retry" in done.stderr
    assert done.stdout == ""
    again = installed_root.run([installed_root.wrapper("beam-cli"), "--version"])
    assert again.code == 0, again.stderr


# A probe as `lease_is_held` does it, except that it holds LOCK_EX for 2 ms each time: what a
# probe preempted between its lock and unlock looks like on a busy machine. While it holds the
# lock it also counts the launchers (`--version` in their command line) that have the lease file
# open: each of those is starting, waiting for its shared lock, right under the probe.
SLOW_PROBES = """
import fcntl, os, sys, time
path, stop = sys.argv[1], sys.argv[2]


def starting_launchers():
    found = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if b"--version" not in handle.read():
                    continue
            fds = os.listdir(f"/proc/{pid}/fd")
            found += any(os.readlink(f"/proc/{pid}/fd/{fd}") == path for fd in fds)
        except OSError:
            continue
    return found


print("probing", flush=True)
count = overlaps = 0
while not os.path.exists(stop):
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        time.sleep(0.002)
        seen = starting_launchers()
        # until one overlap was seen, hold on (well under the launchers' 2 s patience) until a
        # launcher starts under this probe, so the overlap never depends on luck
        until = time.monotonic() + 1.0
        while not overlaps and not seen and time.monotonic() < until:
            time.sleep(0.001)
            seen = starting_launchers()
        overlaps += seen
        fcntl.flock(fd, fcntl.LOCK_UN)
        count += 1
    except BlockingIOError:
        pass
    os.close(fd)
    time.sleep(0.0005)
print(count, overlaps, flush=True)
"""


@needs_proc
def test_probes_never_make_a_starting_launcher_fail(
    installed_root: Installed, tmp_path: Path
) -> None:
    stop = tmp_path / "stop"
    prober = subprocess.Popen([sys.executable, "-c", SLOW_PROBES, str(lease(installed_root)),
                               str(stop)], stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert prober.stdout is not None and prober.stdout.readline() == "probing\n"

    def launch(index: int) -> tuple[int, str]:
        command = ("lean-beam", "beam-cli", "lean-beam-mcp")[index % 3]
        done = installed_root.run([installed_root.launcher(command), "--version"])
        return done.code, done.stderr

    try:
        lister = subprocess.Popen(
            [installed_root.wrapper("lean-beam"), "runtime", "list", "--json"],
            env=installed_root.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(launch, range(40)))
        _, list_err = lister.communicate(timeout=120)
    finally:
        stop.touch()
        probes, _ = prober.communicate(timeout=60)
    failures = [err for code, err in results if code != 0]
    assert failures == [], failures[:3]
    assert lister.returncode == 0, list_err
    count, overlaps = map(int, probes.split())
    assert count > 0
    assert overlaps > 0, "no probe held the lease while a launcher was starting"


def test_running_server_holds_its_lease(installed_root: Installed) -> None:
    root, runtime_id = installed_root.root, installed_root.runtime_id
    assert not lease_is_held(root, runtime_id)
    server = subprocess.Popen([installed_root.wrapper("lean-beam-mcp")], env=installed_root.env(),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not lease_is_held(root, runtime_id):
            assert server.poll() is None, server.communicate()
            assert time.monotonic() < deadline, "the server never took its lease"
            time.sleep(0.05)
    finally:
        server.communicate(timeout=30)
    assert not lease_is_held(root, runtime_id)


@pytest.mark.parametrize("command", ["lean-beam-mcp", "lean-beam", "beam-cli"])
def test_launcher_started_just_as_its_runtime_is_moved_away(
    installed_root: Installed, command: str
) -> None:
    """The shell found `versions/<id>/bin/<command>`, then prune moved the runtime to the trash
    before the interpreter imported anything: "was pruned; restart", never a
    `ModuleNotFoundError` traceback."""
    launcher = Path(installed_root.launcher(command))
    text = launcher.read_text()
    trash = installed_root.root / "state" / "trash"
    trash.mkdir(exist_ok=True)
    os.rename(installed_root.runtime_dir, trash / f"{installed_root.runtime_id}.test")
    lease(installed_root).unlink()
    done = subprocess.run(
        ["/bin/sh", "-c", text, str(launcher), "--version"],  # $0 is the path it was found at
        env=installed_root.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done
    assert f"runtime {installed_root.runtime_id} was pruned; restart" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
