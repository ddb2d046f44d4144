"""How prune and install touch the disk: trash before delete, write bits back, durable order.

Root ignores `0o555`, and CI runs as root, so the deletion tests run the real prune as an
unprivileged user (`setpriv --reuid=nobody`) when the suite runs as root, through the runtime's
own launcher command line with the system interpreter (the recorded one may live under a
directory `nobody` cannot enter). The order of system calls is read from `strace -f -y` of a real
prune and a real install (skipped where strace is missing or cannot trace).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.clienv import client_env, dev_command
from tests.runtime.conftest import install_into
from tests.runtime.trees import clone_runtime

AS_ROOT = os.geteuid() == 0
SYSTEM_PYTHON = "/usr/bin/python3"


def _strace_works() -> bool:
    if shutil.which("strace") is None:
        return False
    done = subprocess.run(["strace", "-f", "-qq", "-o", os.devnull, "true"], check=False)
    return done.returncode == 0


needs_strace = pytest.mark.skipif(
    not _strace_works(), reason="strace is missing or cannot trace here (ptrace denied)"
)
needs_unprivileged = pytest.mark.skipif(
    AS_ROOT and (shutil.which("setpriv") is None or not os.access(SYSTEM_PYTHON, os.X_OK)),
    reason="running as root without setpriv or /usr/bin/python3 to drop to nobody",
)


@dataclass
class World:
    base: Path
    home: Path
    root: Path
    current: str
    old: str

    @property
    def candidate(self) -> Path:
        return self.root / "versions" / self.old

    def trash(self) -> list[str]:
        return os.listdir(self.root / "state" / "trash")


@pytest.fixture
def world() -> Iterator[World]:
    # under /tmp with 0755 (pytest's tmp_path is 0700, closed to `nobody`)
    base = Path(tempfile.mkdtemp(prefix="beam-prune-", dir="/tmp"))
    os.chmod(base, 0o755)
    home = base / "home"
    home.mkdir()
    root = base / "beam"
    current = install_into(home, root)
    old = clone_runtime(root, current, variant="old", created_at="2020-01-01T00:00:00Z")
    try:
        yield World(base, home, root, current, old)
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(base)], check=False)
        shutil.rmtree(base, ignore_errors=True)


def give_to_nobody(path: Path) -> None:
    if AS_ROOT:
        subprocess.run(["chown", "-R", "--no-dereference", "nobody:nogroup", str(path)], check=True)


def unprivileged_prune(world: World) -> subprocess.CompletedProcess[str]:
    """`runtime prune --yes --keep-latest 0 --json` through the current runtime's launcher."""
    launcher = world.root / "versions" / world.current / "bin" / "lean-beam"
    args = ["runtime", "prune", "--yes", "--keep-latest", "0", "--json"]
    env = client_env(world.home, BEAM_INSTALL_ROOT=str(world.root))
    if not AS_ROOT:
        argv = [str(launcher), *args]
    else:
        text = launcher.read_text()
        start = text.index("\nexec ") + 1
        exec_line = text[start:]  # the -c code may span several lines
        words = shlex.split(exec_line)[1:]  # interpreter, flags, -c code, "$0", "$@"
        assert words[-2:] == ["$0", "$@"], exec_line
        argv = [
            "setpriv",
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            SYSTEM_PYTHON,
            *words[1:-2],
            str(launcher),
            *args,
        ]
        env.update(USER="nobody", LOGNAME="nobody")
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)


def cannot_unlink_as_prune_user(directory: Path) -> bool:
    """The precondition of the write-bits test: the prune's user cannot empty `directory`."""
    victim = next(directory.iterdir())
    argv = ["rm", "-f", str(victim)]
    if AS_ROOT:
        argv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *argv]
    subprocess.run(argv, capture_output=True, check=False)
    return victim.exists()


@needs_unprivileged
def test_directories_get_their_write_bits_back_before_deletion(world: World) -> None:
    locked = world.candidate / "site" / "locked" / "deeper"
    locked.mkdir(parents=True)
    (locked / "file").write_text("x")
    os.chmod(locked / "file", 0o444)
    os.chmod(locked, 0o555)
    os.chmod(locked.parent, 0o555)
    give_to_nobody(world.base)
    assert cannot_unlink_as_prune_user(locked)
    done = unprivileged_prune(world)
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["removed"] == [world.old]
    assert not os.path.lexists(world.candidate)
    assert world.trash() == []


@needs_unprivileged
@pytest.mark.skipif(not AS_ROOT, reason="needs root to make a directory prune's user cannot change")
def test_a_failed_deletion_leaves_the_runtime_out_of_versions(world: World) -> None:
    give_to_nobody(world.base)
    stuck = world.candidate / "site" / "root-owned"
    stuck.mkdir()  # owned by root: nobody can neither chmod it nor unlink inside it
    (stuck / "file").write_text("x")
    done = unprivileged_prune(world)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["removed"] == [world.old]
    assert not os.path.lexists(world.candidate)  # never half a runtime in versions/
    (leftover,) = world.trash()
    assert leftover.startswith(world.old + ".")
    assert (world.root / "state" / "trash" / leftover / "site" / "root-owned" / "file").is_file()
    again = subprocess.run(
        [str(world.root / "bin" / "lean-beam"), "runtime", "prune", "--yes", "--json"],
        env=client_env(world.home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["trash_cleared"] == 1 and world.trash() == []


# --- system call order ---

TRACED = (
    "rename,renameat,renameat2,unlink,unlinkat,rmdir,fsync,fdatasync,syncfs,sync,symlink,symlinkat"
)
CALL = re.compile(r"^\d+\s+(\w+)\((.*)\) += (-?\d+)")
FD_PATH = re.compile(r"^-?\d+<([^>]*)>")


@dataclass(frozen=True)
class Call:
    name: str
    args: list[str]  # string arguments unquoted; a descriptor as the path strace showed for it

    def __str__(self) -> str:
        return f"{self.name}({', '.join(self.args)})"


def _arg(text: str) -> str:
    text = text.strip()
    if text.startswith('"'):
        return str(json.loads(text))
    fd = FD_PATH.match(text)
    return fd.group(1) if fd else text


def traced(argv: list[str], env: dict[str, str], out: Path) -> tuple[list[Call], Any]:
    log = out.with_suffix(".strace")
    done = subprocess.run(
        ["strace", "-f", "-y", "-qq", "-e", f"trace={TRACED}", "-o", str(log), *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = log.read_text()
    if not text.strip():  # the command ran but nothing was traced: tracing is not working here
        pytest.skip(f"strace recorded no system call at all (stderr: {done.stderr[-300:]!r})")
    calls = []
    for line in text.splitlines():
        match = CALL.match(line)
        if match and match.group(3) != "-1":
            args = re.split(r", (?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", match.group(2))
            calls.append(Call(match.group(1), [_arg(a) for a in args]))
    assert calls, f"no strace line parsed; the log starts:\n{text[:2000]}"
    return calls, json.loads(done.stdout)


def index_of(calls: list[Call], name_prefix: str, *needles: str) -> int:
    for i, call in enumerate(calls):
        if call.name.startswith(name_prefix) and all(
            any(n in a for a in call.args) for n in needles
        ):
            return i
    raise AssertionError(f"no {name_prefix}{needles} in:\n" + "\n".join(map(str, calls)))


@needs_strace
def test_prune_renames_into_trash_before_deleting_anything(world: World) -> None:
    argv = [
        str(world.root / "bin" / "lean-beam"),
        "runtime",
        "prune",
        "--yes",
        "--keep-latest",
        "0",
        "--json",
    ]
    calls, body = traced(argv, client_env(world.home), world.base / "prune")
    assert body["removed"] == [world.old]
    versions_entry = f"{world.root}/versions/{world.old}"
    moved = index_of(calls, "rename", versions_entry, f"{world.root}/state/trash/{world.old}.")
    deletions = [i for i, c in enumerate(calls) if c.name in ("unlink", "unlinkat", "rmdir")]
    touching = [i for i in deletions if any(world.old in a for a in calls[i].args)]
    assert touching, "prune deleted none of the runtime's files"
    assert min(touching) > moved
    under_versions = [c for c in calls if any(a.startswith(versions_entry) for a in c.args)]
    assert [c.name for c in under_versions] == [calls[moved].name], under_versions


@needs_strace
def test_install_makes_each_step_durable_in_order(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "beam"
    argv = [
        dev_command("lean-beam"),
        "install",
        "--install-root",
        str(root),
        "--bin-dir",
        str(home / ".local" / "bin"),
        "--json",
    ]
    calls, body = traced(argv, client_env(home), tmp_path / "install")
    runtime_id = body["runtime"]["id"]
    runtime = f"{root}/versions/{runtime_id}"
    staging = f"{root}/state/staging/{runtime_id}."
    published = index_of(calls, "rename", staging, runtime)
    stage = next(a for a in calls[published].args if a.startswith(staging))
    synced = [
        i
        for i, c in enumerate(calls)
        # the whole stage at once: `syncfs` of its filesystem, or `sync` (the manifest's own
        # fsync does not make the other files durable)
        if c.name == "sync" or (c.name == "syncfs" and c.args[0] == stage)
    ]
    assert synced and min(synced) < published, "the staged files were not flushed before rename"
    assert index_of(calls, "fsync", f"{root}/versions") > published
    link = index_of(calls, "symlink", f"versions/{runtime_id}", f"{root}/.current.tmp-")
    switched = index_of(calls, "rename", f"{root}/.current.tmp-", f"{root}/current")
    assert published < link < switched
    assert any(c.name == "fsync" and c.args[0] == str(root) for c in calls[switched:])
    current = f"{root}/current"
    assert not [c for c in calls if c.name in ("unlink", "unlinkat") and current in c.args]
    assert os.readlink(current) == f"versions/{runtime_id}"


def test_deleting_a_runtime_never_changes_what_its_links_point_to(world: World) -> None:
    outside = world.base / "outside"
    outside.mkdir()
    (outside / "keep").write_text("x")
    os.chmod(outside, 0o555)
    os.symlink(outside, world.candidate / "site" / "link")  # a directory link inside the tree
    done = subprocess.run(
        [
            str(world.root / "bin" / "lean-beam"),
            "runtime",
            "prune",
            "--yes",
            "--keep-latest",
            "0",
            "--json",
        ],
        env=client_env(world.home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["removed"] == [world.old]
    assert world.trash() == []
    assert os.stat(outside).st_mode & 0o777 == 0o555
    assert (outside / "keep").read_text() == "x"
