"""Prune's final re-checks, one fast test each, through its pause hook.

`BEAM_PRUNE_PAUSE_DIR` stops a real `lean-beam runtime prune --yes` right before the re-check of
each candidate (`<n>.waiting` holds the id; `<n>.go` lets it continue). Each test changes one
thing at that moment (the candidate is replaced by a copy, made current, registered, leased,
moved away, or loses its manifest) and checks that prune leaves the runtime alone and says why.
A control test changes nothing and sees the runtime go, so the pause itself proves nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from beam_install.current import switch_current
from tests.runtime.conftest import Installed, LeaseHolder, write_codex
from tests.runtime.trees import clone_runtime


def wait_for(path: Path, proc: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"prune never reached {what}"
        time.sleep(0.005)


@dataclass
class Paused:
    """A prune stopped before the re-check of its only candidate, `candidate`."""

    installed: Installed
    candidate: str
    pause: Path
    proc: subprocess.Popen[str]

    @property
    def entry(self) -> Path:
        return self.installed.versions() / self.candidate

    def finish(self) -> dict[str, Any]:
        (self.pause / "0.go").touch()
        out, err = self.proc.communicate(timeout=120)
        assert self.proc.returncode == 0, err
        body: dict[str, Any] = json.loads(out)
        assert body["planned"] == [self.candidate]
        return body


def start_paused(installed: Installed, tmp_path: Path, candidate: str | None = None) -> Paused:
    """`prune --yes --keep-latest 0` stopped before the re-check of its only candidate: an old
    clone of the installed runtime unless `candidate` names one already there."""
    if candidate is None:
        candidate = clone_runtime(
            installed.root, installed.runtime_id, variant="old", created_at="2020-01-01T00:00:00Z"
        )
    pause = tmp_path / "pause"
    pause.mkdir()
    argv = [str(installed.root / "bin" / "lean-beam"), "runtime", "prune", "--yes"]
    proc = subprocess.Popen(
        [*argv, "--keep-latest", "0", "--json"],
        env=installed.env(BEAM_PRUNE_PAUSE_DIR=str(pause)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(pause / "0.waiting", proc, "its pause")
    assert (pause / "0.waiting").read_text() == candidate
    return Paused(installed, candidate, pause, proc)


@pytest.fixture
def paused(installed: Installed, tmp_path: Path) -> Iterator[Paused]:
    run = start_paused(installed, tmp_path)
    yield run
    if run.proc.poll() is None:
        (run.pause / "0.go").touch()
        run.proc.communicate(timeout=120)


def late(body: dict[str, Any], candidate: str) -> tuple[list[Any], list[Any]]:
    kept = [k["reasons"] for k in body["kept"] if k["id"] == candidate]
    skipped = [s["reason"] for s in body["skipped"] if s["entry"] == candidate]
    return kept, skipped


def test_control_an_unchanged_candidate_is_removed(paused: Paused) -> None:
    body = paused.finish()
    assert body["removed"] == [paused.candidate]
    assert not os.path.lexists(paused.entry)
    assert os.listdir(paused.installed.root / "state" / "trash") == []


def test_a_copy_swapped_in_is_left_alone(paused: Paused, tmp_path: Path) -> None:
    aside = tmp_path / "aside"
    os.rename(paused.entry, aside)
    subprocess.run(["cp", "-a", str(aside), str(paused.entry)], check=True)
    body = paused.finish()
    assert body["removed"] == []
    assert late(body, paused.candidate) == ([], ["replaced since the plan was made; left alone"])
    assert (paused.entry / "manifest.json").is_file() and (aside / "manifest.json").is_file()


def test_a_symlink_swapped_in_is_left_alone(paused: Paused, tmp_path: Path) -> None:
    aside = tmp_path / "aside"
    os.rename(paused.entry, aside)
    os.symlink(aside, paused.entry)
    body = paused.finish()
    assert body["removed"] == []
    assert late(body, paused.candidate)[1] == ["replaced since the plan was made; left alone"]
    assert paused.entry.is_symlink() and (aside / "manifest.json").is_file()


def test_a_candidate_that_vanished_is_reported(paused: Paused, tmp_path: Path) -> None:
    aside = tmp_path / "aside"
    os.rename(paused.entry, aside)
    body = paused.finish()
    assert body["removed"] == []
    assert late(body, paused.candidate)[1] == ["vanished before removal"]
    assert (aside / "manifest.json").is_file()


def test_a_candidate_that_lost_its_manifest_is_skipped(paused: Paused) -> None:
    (paused.entry / "manifest.json").unlink()  # same directory, same inode, now invalid
    body = paused.finish()
    assert body["removed"] == []
    kept, skipped = late(body, paused.candidate)
    assert kept == [] and len(skipped) == 1 and "manifest" in skipped[0]
    assert (paused.entry / "site").is_dir()


def test_a_candidate_made_current_is_kept(paused: Paused) -> None:
    switch_current(paused.installed.root, paused.candidate)  # a writer that ignores the lock
    body = paused.finish()
    assert body["removed"] == []
    assert late(body, paused.candidate) == ([["current"]], [])
    assert (paused.entry / "manifest.json").is_file()


@pytest.mark.parametrize("client", ["codex", "claude-code"])
def test_a_candidate_registered_at_the_pause_is_kept(paused: Paused, client: str) -> None:
    home, root = paused.installed.home, paused.installed.root
    command = f"{root}/versions/{paused.candidate}/bin/lean-beam-mcp"
    if client == "codex":
        write_codex(home, {"late": command})
        reason = f"referenced by codex:late in {home / '.codex' / 'config.toml'}"
    else:
        (home / ".claude.json").write_text(
            json.dumps(
                {"mcpServers": {"late": {"command": "sh", "args": ["-c", f"exec {command}"]}}}
            )
        )
        reason = f"referenced by claude-code:late in {home / '.claude.json'}"
    body = paused.finish()
    assert body["removed"] == []
    assert late(body, paused.candidate) == ([[reason]], [])
    assert (paused.entry / "manifest.json").is_file()


def test_an_unparsable_config_written_at_the_pause_keeps_the_candidate(paused: Paused) -> None:
    home, root = paused.installed.home, paused.installed.root
    (home / ".claude.json").write_text(f'{{"mcpServers": "{root}/versions/{paused.candidate}')
    body = paused.finish()
    assert body["removed"] == []
    ((reason,),) = late(body, paused.candidate)[0]
    assert reason.startswith("referenced by claude-code (") and "does not parse" in reason


def test_a_candidate_leased_at_the_pause_is_kept(paused: Paused) -> None:
    holder = LeaseHolder(paused.installed.root, paused.candidate)
    try:
        assert holder.held
        body = paused.finish()
    finally:
        holder.stop()
    assert body["removed"] == []
    assert late(body, paused.candidate) == ([[f"active (pid {holder.proc.pid})"]], [])
    assert (paused.entry / "manifest.json").is_file()


LOCK_HOLDER = (
    "import sys\nfrom pathlib import Path\nfrom beam_install.lock import install_lock\n"
    "with install_lock(Path(sys.argv[1]), timeout=30, command='test holder'):\n"
    "    print('locked', flush=True); sys.stdin.read()\n"
)


# `clock_nanosleep` by architecture: filelock sleeps in it between attempts at a held lock.
NANOSLEEP = {"x86_64": "230", "aarch64": "115"}.get(os.uname().machine)


def sleeping(pid: int) -> bool:
    """True while `pid` sleeps in `clock_nanosleep` (prune sleeps nowhere before the lock)."""
    try:
        return Path(f"/proc/{pid}/syscall").read_text().split()[0] == NANOSLEEP
    except (OSError, IndexError):
        return False


def wait_until(condition: Callable[[], bool], proc: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


@pytest.mark.skipif(
    NANOSLEEP is None or not Path("/proc/self/syscall").exists(),
    reason="needs /proc/<pid>/syscall on x86_64 or aarch64 to see prune wait for the lock",
)
def test_running_runtime_is_checked_current_again_under_the_lock(installed: Installed) -> None:
    """`current` switches while prune waits for the install lock: prune must refuse then."""
    root = installed.root
    other = clone_runtime(
        root, installed.runtime_id, variant="new", created_at="2030-01-01T00:00:00Z"
    )
    before = set(os.listdir(installed.versions()))
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    argv = [
        str(root / "bin" / "lean-beam"),
        "runtime",
        "prune",
        "--yes",
        "--keep-latest",
        "0",
        "--lock-timeout",
        "60",
        "--json",
    ]
    prune = subprocess.Popen(
        argv, env=installed.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        # past its first current-check, prune sleeps between attempts at the held lock
        wait_until(lambda: sleeping(prune.pid), prune, "prune never waited for the lock")
        switch_current(root, other)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    out, err = prune.communicate(timeout=120)
    assert prune.returncode == 1, out
    error = json.loads(err)["error"]
    assert error["category"] == "runtimeNotCurrent"
    assert error["details"] == {"running": installed.runtime_id, "current": other}
    assert set(os.listdir(installed.versions())) == before
