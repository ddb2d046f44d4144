"""`lean-beam runtime prune` through the installed wrapper, with real leases, configs and locks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runtime.clienv import dev_command, run
from tests.runtime.conftest import Installed, write_codex
from tests.runtime.trees import clone_runtime


def make_old(installed: Installed, count: int) -> list[str]:
    """`count` derived runtimes, oldest first, all older than the installed one."""
    return [
        clone_runtime(
            installed.root,
            installed.runtime_id,
            variant=str(i),
            created_at=f"2020-01-01T00:00:{i:02d}Z",
        )
        for i in range(count)
    ]


def present(installed: Installed) -> set[str]:
    return set(os.listdir(installed.versions()))


def prune(installed: Installed, *args: str, **env: str):  # type: ignore[no-untyped-def]
    return installed.beam("runtime", "prune", *args, **env)


def test_dry_run_is_the_default_and_changes_nothing(installed: Installed) -> None:
    old = make_old(installed, 4)
    before = present(installed)
    for args in ([], ["--dry-run"], ["--dry-run", "--yes"]):
        result = prune(installed, *args, "--json")
        assert result.code == 0, result.stderr
        body = result.json()
        assert body["dry_run"] is True
        assert body["planned"] == old[:2] and body["removed"] == []
        assert present(installed) == before
    text = prune(installed)
    assert "would remove: " + old[0] in text.stdout and "--yes" in text.stdout


def test_yes_removes_the_plan_and_keeps_the_newest(installed: Installed) -> None:
    old = make_old(installed, 5)
    result = prune(installed, "--yes")
    assert result.code == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if line.startswith("removed: ")] == [
        f"removed: {rid}" for rid in old[:3]
    ]
    assert present(installed) == {installed.runtime_id, *old[3:]}
    leases = set(os.listdir(installed.root / "state" / "leases"))
    assert leases == {f"{rid}.lease" for rid in (installed.runtime_id, *old[3:])}
    assert os.listdir(installed.root / "state" / "trash") == []
    again = prune(installed, "--yes", "--json").json()
    assert again["planned"] == [] and again["removed"] == []


def test_keep_latest_zero_never_removes_current(installed: Installed) -> None:
    make_old(installed, 3)
    body = prune(installed, "--yes", "--keep-latest", "0", "--json").json()
    assert len(body["removed"]) == 3
    assert present(installed) == {installed.runtime_id}
    assert body["kept"] == [{"id": installed.runtime_id, "reasons": ["current"]}]  # not itself


@pytest.mark.parametrize("value", ["-1", "65", "two"])
def test_keep_latest_out_of_range_is_a_usage_error(installed: Installed, value: str) -> None:
    make_old(installed, 1)
    before = present(installed)
    result = prune(installed, "--yes", "--keep-latest", value)
    assert result.code == 2 and result.stdout == ""
    assert present(installed) == before


def test_unknown_flag_is_a_usage_error(installed: Installed) -> None:
    result = prune(installed, "--apply")
    assert result.code == 2 and result.stdout == ""


def test_active_and_referenced_runtimes_are_kept(installed: Installed, lease_holders) -> None:  # type: ignore[no-untyped-def]
    root, home = installed.root, installed.home
    old = make_old(installed, 6)
    holder = lease_holders(root, old[0])
    assert holder.held
    write_codex(home, {"beam": f"{root}/versions/{old[1]}/bin/lean-beam-mcp"})
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "projects": {
                    "/p": {
                        "mcpServers": {
                            "b": {"command": "x", "env": {"P": f"{root}/versions/{old[2]}/bin"}}
                        }
                    }
                }
            }
        )
    )
    vibe = home / ".vibe"
    vibe.mkdir()
    (vibe / "config.toml").write_text(f'[[mcp_servers]\nname = "{old[3]}"\n')  # does not parse
    body = prune(installed, "--yes", "--keep-latest", "0", "--json").json()
    kept = {k["id"]: k["reasons"] for k in body["kept"]}
    assert kept[old[0]] == [f"active (pid {holder.proc.pid})"]
    assert kept[old[1]] == [f"referenced by codex:beam in {home}/.codex/config.toml"]
    assert kept[old[2]] == [f"referenced by claude-code:b (project /p) in {home}/.claude.json"]
    assert "does not parse" in kept[old[3]][0]
    assert body["removed"] == old[4:]
    assert present(installed) == {installed.runtime_id, *old[:4]}


def test_invalid_symlinked_and_unexpected_entries_are_skipped(
    installed: Installed, tmp_path: Path
) -> None:
    old = make_old(installed, 2)
    versions = installed.versions()
    outside = tmp_path / "outside"
    os.rename(versions / old[0], outside)
    os.symlink(outside, versions / old[0])
    (versions / "notes.txt").write_text("keep me")
    (versions / "half").mkdir()
    (versions / "half" / "file").write_text("x")
    result = prune(installed, "--yes", "--keep-latest", "0", "--json")
    assert result.code == 0, result.stderr
    body = result.json()
    assert {s["entry"] for s in body["skipped"]} == {old[0], "notes.txt", "half"}
    assert body["removed"] == [old[1]]
    assert (versions / old[0]).is_symlink() and (outside / "manifest.json").is_file()
    assert (versions / "notes.txt").read_text() == "keep me"
    assert (versions / "half" / "file").is_file()


def test_refuses_a_development_identity(installed: Installed) -> None:
    make_old(installed, 3)
    before = present(installed)
    env = installed.env(BEAM_NO_DELEGATE="1", BEAM_INSTALL_ROOT=str(installed.root))
    result = run([dev_command("lean-beam"), "runtime", "prune", "--yes", "--json"], env)
    assert result.code == 1
    assert result.error()["category"] == "notInstalledRuntime"
    assert present(installed) == before


def test_delegation_runs_prune_from_current(installed: Installed) -> None:
    old = make_old(installed, 3)
    env = installed.env(BEAM_INSTALL_ROOT=str(installed.root))
    result = run([dev_command("lean-beam"), "runtime", "prune", "--yes", "--json"], env)
    assert result.code == 0, result.stderr
    assert result.json()["removed"] == old[:1]


def test_refuses_a_runtime_that_is_not_current(installed: Installed) -> None:
    old = make_old(installed, 3)
    before = present(installed)
    launcher = installed.versions() / old[2] / "bin" / "lean-beam"
    result = run([str(launcher), "runtime", "prune", "--yes", "--json"], installed.env())
    assert result.code == 1
    error = result.error()
    assert error["category"] == "runtimeNotCurrent" and "bin/lean-beam" in error["fix"]
    assert present(installed) == before


def test_lock_timeout_names_the_holder(installed: Installed) -> None:
    make_old(installed, 3)
    before = present(installed)
    code = (
        "import sys\nfrom pathlib import Path\nfrom beam_install.lock import install_lock\n"
        "with install_lock(Path(sys.argv[1]), timeout=5, command='holder-under-test'):\n"
        "    print('locked', flush=True); sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(installed.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        result = prune(installed, "--yes", "--lock-timeout", "0.2", "--json")
        assert result.code == 1
        error = result.error()
        assert error["category"] == "lockTimeout"
        assert f"pid {holder.pid}" in error["message"] and "holder-under-test" in error["message"]
        assert present(installed) == before
        text = prune(installed, "--yes", "--lock-timeout", "0.2")
        assert text.code == 1 and text.stdout == "" and "holder-under-test" in text.stderr
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def _fail_second_removal(installed: Installed, pause: Path) -> None:
    """At the second pause, replace the (empty) trash directory with a file."""
    import time

    deadline = time.monotonic() + 60
    while not (pause / "1.waiting").exists():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    trash = installed.root / "state" / "trash"
    trash.rmdir()
    trash.write_text("in the way")
    (pause / "1.go").touch()


@pytest.mark.parametrize("as_json", [True, False])
def test_failure_midway_says_what_was_removed(
    installed: Installed, tmp_path: Path, as_json: bool
) -> None:
    old = make_old(installed, 3)
    pause = tmp_path / "pause"
    pause.mkdir()
    (pause / "0.go").touch()
    (pause / "2.go").touch()
    args = [
        str(installed.root / "bin" / "lean-beam"),
        "runtime",
        "prune",
        "--yes",
        "--keep-latest",
        "0",
        *(["--json"] if as_json else []),
    ]
    proc = subprocess.Popen(
        args,
        env=installed.env(BEAM_PRUNE_PAUSE_DIR=str(pause)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _fail_second_removal(installed, pause)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert present(installed) == {installed.runtime_id, *old[1:]}
    if as_json:
        body = json.loads(out)
        assert body["removed"] == [old[0]] and body["planned"] == old
        assert body["error"]["category"] == "pruneIncomplete"
        assert body["error"]["details"]["removed"] == [old[0]]
    else:
        assert f"removed: {old[0]}" in out
        assert "already removed: " + old[0] in err and "--dry-run" in err


def test_old_trash_is_cleared(installed: Installed) -> None:
    leftover = installed.root / "state" / "trash" / "0.1.0-dead.0123"
    (leftover / "site").mkdir(parents=True)
    (leftover / "site" / "f").write_text("x")
    os.chmod(leftover / "site" / "f", 0o444)
    os.chmod(leftover / "site", 0o555)
    body = prune(installed, "--yes", "--json").json()
    assert body["trash_cleared"] == 1
    assert os.listdir(installed.root / "state" / "trash") == []
