"""Safety checks of the install root, each pinned through the real commands.

Every test here fails when its check is deleted or weakened (docs/CONTRIBUTING.md lists the
one-line weakenings each one was shown to catch).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runtime.clienv import dev_command, run
from tests.runtime.conftest import Installed, write_codex
from tests.runtime.trees import clone_runtime


def _listing(installed: Installed) -> dict:  # type: ignore[type-arg]
    """`runtime list --json` through the development command (the root's wrappers need a
    sound `current`, which some tests here break on purpose)."""
    done = run(
        [
            dev_command("lean-beam"),
            "runtime",
            "list",
            "--json",
            "--install-root",
            str(installed.root),
        ],
        installed.env(),
    )
    assert done.code == 0, done.stderr
    return done.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "text",
    [
        "old/{id}",  # another folder holding a name that exists in versions/
        "versions/{id}/",  # a trailing slash
        "./versions/{id}",  # a spelling of the same path
        "{root}/versions/{id}",  # absolute
        "versions/.",  # the versions directory itself
        "versions/..",  # the install root
    ],
)
def test_current_must_read_exactly_versions_slash_id(installed: Installed, text: str) -> None:
    current = installed.root / "current"
    current.unlink()
    current.symlink_to(text.format(id=installed.runtime_id, root=installed.root))
    assert _listing(installed)["current"] is None
    doctor = run(
        [dev_command("lean-beam"), "doctor", "--json", "--install-root", str(installed.root)],
        installed.env(),
    )
    assert doctor.code == 1


def test_a_runtime_directory_that_is_a_link_is_invalid_and_never_current(
    installed: Installed, tmp_path: Path
) -> None:
    # A complete, valid-looking runtime outside the root, linked into versions/ under its id.
    other = clone_runtime(
        installed.root, installed.runtime_id, variant="x", created_at="2030-01-01T00:00:00Z"
    )
    outside = tmp_path / "elsewhere"
    shutil.move(str(installed.versions() / other), outside)
    (installed.versions() / other).symlink_to(outside)
    (installed.root / "current").unlink()
    (installed.root / "current").symlink_to(f"versions/{other}")
    body = _listing(installed)
    assert body["current"] is None
    by_id = {entry["id"]: entry for entry in body["runtimes"]}
    assert by_id[other]["invalid"] and "not a real directory" in by_id[other]["invalid"]
    assert by_id[installed.runtime_id]["invalid"] is None


def _executable_payload_file(runtime: Path) -> Path:
    """An executable regular file of the runtime that is not one of its launchers."""
    launchers = runtime / "bin"
    for current, _dirs, files in os.walk(runtime):
        for name in sorted(files):
            path = Path(current) / name
            if path.parent != launchers and os.lstat(path).st_mode & stat.S_IXUSR:
                return path
    raise AssertionError(f"no executable payload file in {runtime}")


def _doctor_problem(installed: Installed) -> str:
    done = installed.beam("doctor", "--json")
    assert done.code == 1, done.stdout
    return done.stdout


def test_a_runtime_file_replaced_by_a_link_to_the_same_bytes_is_invalid(
    installed: Installed, tmp_path: Path
) -> None:
    """Same content, same mode bits: only "every file is a regular file" tells them apart."""
    runtime = installed.versions() / installed.runtime_id
    victim = _executable_payload_file(runtime)
    copy = tmp_path / "copy"
    shutil.copy2(victim, copy)
    os.chmod(victim.parent, 0o755)
    victim.unlink()
    victim.symlink_to(copy)
    assert f"{victim} is not a regular file" in _doctor_problem(installed)


def test_a_bytecode_file_replaced_by_a_link_is_invalid(
    installed: Installed, tmp_path: Path
) -> None:
    runtime = installed.versions() / installed.runtime_id
    pyc = next(p for p in sorted(runtime.rglob("*.pyc")))
    copy = tmp_path / "copy.pyc"
    shutil.copy2(pyc, copy)
    os.chmod(pyc.parent, 0o755)
    pyc.unlink()
    pyc.symlink_to(copy)
    assert f"{pyc} is not a regular file" in _doctor_problem(installed)


def test_uninstall_leaves_a_user_link_that_points_elsewhere(installed: Installed) -> None:
    user_bin = installed.home / ".local" / "bin"
    ours = sorted(p.name for p in user_bin.iterdir() if p.is_symlink())
    assert "lean-beam" in ours
    mine = user_bin / "lean-beam"
    mine.unlink()
    mine.symlink_to("/usr/bin/env")  # the user's own command now
    done = run(
        [
            dev_command("lean-beam"),
            "uninstall",
            "--yes",
            "--json",
            "--install-root",
            str(installed.root),
            "--bin-dir",
            str(user_bin),
        ],
        installed.env(),
    )
    assert done.code == 0, done.stderr
    assert os.readlink(mine) == "/usr/bin/env"
    assert sorted(p.name for p in user_bin.iterdir()) == ["lean-beam"]


def test_cleanup_never_follows_a_link_out_of_the_tree_it_deletes(
    installed: Installed, tmp_path: Path
) -> None:
    """Leftovers of a killed install hold links to the user's files; a later install clears the
    leftovers and leaves the linked files, and their modes, alone."""
    precious = tmp_path / "precious"
    (precious / "inner").mkdir(parents=True)
    (precious / "inner" / "data.txt").write_text("keep me\n")
    os.chmod(precious / "inner", 0o500)
    os.chmod(precious, 0o500)
    staging = installed.root / "state" / "staging"
    leftover = staging / "killed-install"
    (leftover / "site").mkdir(parents=True)
    (leftover / "site" / "linked-dir").symlink_to(precious)
    (staging / "linked-entry").symlink_to(precious)
    done = run(
        [
            dev_command("lean-beam"),
            "install",
            "--json",
            "--install-root",
            str(installed.root),
            "--bin-dir",
            str(installed.home / ".local" / "bin"),
        ],
        installed.env(),
    )
    assert done.code == 0, done.stderr
    assert not leftover.exists() and not (staging / "linked-entry").is_symlink()
    assert (precious / "inner" / "data.txt").read_text() == "keep me\n"
    assert stat.S_IMODE(os.stat(precious).st_mode) == 0o500
    assert stat.S_IMODE(os.stat(precious / "inner").st_mode) == 0o500


def test_a_registered_command_spelled_with_a_tilde_pins_its_runtime(installed: Installed) -> None:
    home_relative = os.path.relpath(installed.root, installed.home)
    old = clone_runtime(
        installed.root, installed.runtime_id, variant="old", created_at="2001-01-01T00:00:00Z"
    )
    command = f"~/{home_relative}/versions/{old}/bin/lean-beam-mcp"
    write_codex(installed.home, {"lean-beam": command})
    by_id = {entry["id"]: entry for entry in _listing(installed)["runtimes"]}
    assert [ref["server_name"] for ref in by_id[old]["referenced_by"]] == ["lean-beam"]
    pruned = installed.beam("runtime", "prune", "--keep-latest", "0", "--yes", "--json")
    assert pruned.code == 0, pruned.stderr
    assert (installed.versions() / old).is_dir()


def test_prune_plans_no_removal_of_a_runtime_whose_manifest_cannot_be_read(
    installed: Installed,
) -> None:
    old = clone_runtime(
        installed.root, installed.runtime_id, variant="old", created_at="2001-01-01T00:00:00Z"
    )
    manifest = installed.versions() / old / "manifest.json"
    os.chmod(manifest.parent, 0o755)
    manifest.write_text("{ not json")
    done = installed.beam("runtime", "prune", "--keep-latest", "0", "--json")
    assert done.code == 0, done.stderr
    body = done.json()
    assert old not in body["planned"]
    assert old in [s["entry"] for s in body["skipped"]]


def test_prune_waits_for_the_install_lock_before_it_removes_anything(installed: Installed) -> None:
    """Another process holds `state/install.lock`: prune never starts removing without it."""
    old = clone_runtime(
        installed.root, installed.runtime_id, variant="old", created_at="2001-01-01T00:00:00Z"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(installed.root / "state" / "install.lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        done = installed.beam(
            "runtime", "prune", "--keep-latest", "0", "--yes", "--json", "--lock-timeout", "1"
        )
        assert done.code == 1 and done.error()["category"] == "lockTimeout", done.stderr
        assert (installed.versions() / old).is_dir()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    done = installed.beam("runtime", "prune", "--keep-latest", "0", "--yes", "--json")
    assert done.code == 0 and done.json()["removed"] == [old], done.stderr


HOLD_LOCK = (
    "import sys\nfrom filelock import FileLock\n"
    "lock = FileLock(sys.argv[1], thread_local=False)\nlock.acquire()\n"
    "print('held', flush=True)\nsys.stdin.read()\n"
)


def test_install_never_reuses_a_runtime_whose_bytecode_changed(installed: Installed) -> None:
    runtime = installed.versions() / installed.runtime_id
    pyc = next(p for p in sorted(runtime.rglob("*.pyc")))
    os.chmod(pyc.parent, 0o755)
    os.chmod(pyc, 0o644)
    data = bytearray(pyc.read_bytes())
    data[-1] ^= 0xFF
    pyc.write_bytes(bytes(data))
    done = run(
        [
            dev_command("lean-beam"),
            "install",
            "--json",
            "--install-root",
            str(installed.root),
            "--bin-dir",
            str(installed.home / ".local" / "bin"),
        ],
        installed.env(),
    )
    assert done.code == 1, done.stdout
    error = done.error()
    assert error["category"] == "invalidRuntime" and "bytecode" in error["message"]


def test_a_tilde_command_through_a_link_into_versions_pins_its_runtime(
    installed: Installed,
) -> None:
    """`~/mylink/bin/...` where `~/mylink` leads to `versions/<id>`: only the link tells."""
    old = clone_runtime(
        installed.root, installed.runtime_id, variant="old", created_at="2001-01-01T00:00:00Z"
    )
    (installed.home / "mylink").symlink_to(installed.versions() / old)
    write_codex(installed.home, {"lean-beam": "~/mylink/bin/lean-beam-mcp"})
    by_id = {entry["id"]: entry for entry in _listing(installed)["runtimes"]}
    assert [ref["server_name"] for ref in by_id[old]["referenced_by"]] == ["lean-beam"]


def test_a_marker_that_is_a_link_to_a_valid_marker_is_refused(
    installed: Installed, tmp_path: Path
) -> None:
    """The root's marker must be a regular file: a link to identical bytes is not one."""
    from beam_runtime.layout import MARKER_NAME

    marker = installed.root / MARKER_NAME
    copy = tmp_path / "marker-copy.json"
    shutil.copy2(marker, copy)
    marker.unlink()
    marker.symlink_to(copy)
    (entry,) = _listing(installed)["runtimes"]
    assert "not a regular file" in entry["invalid"], entry
