"""Bad configs and faults during `lean-beam setup`: every file stays exactly as before or becomes
exactly as planned, with a clear message and exit 1 (real processes, real files, temp HOME)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
from pathlib import Path

import pytest

from tests.setup.conftest import CLIENTS, Beam, load_json, snapshot

# --all writes 7 configs (in CLIENTS order), 2 skills, then the registrations record.
WRITES = len(CLIENTS) + 2 + 1


def planned_state(beam: Beam, tmp_path: Path) -> dict[str, bytes | str]:
    """What `setup --all --yes` produces from the same starting HOME, done in a copy."""
    import shutil

    twin = Beam(tmp_path / "twin-home", beam.root, beam.runtime_id)
    shutil.copytree(beam.home, twin.home, symlinks=True)
    twin.setup_json("--all", "--yes")
    state = snapshot(twin.home)
    twin.beam("remove", "--all", "--yes")  # the shared root's record back as it was
    return state


def seed(beam: Beam) -> None:
    """Existing configs for some clients, so rollback has old contents to restore."""
    beam.config("claude-code").write_text('{\n  "numStartups": 1\n}\n')
    beam.config("codex").parent.mkdir(parents=True)
    beam.config("codex").write_text('# keep\nmodel = "o3"\n')


def assert_failed(done: object, category: str, file: Path) -> dict[str, object]:
    error = done.error()  # type: ignore[attr-defined]
    assert done.code == 1 and error["category"] == category, error  # type: ignore[attr-defined]
    assert str(file) in error["message"] and error["fix"]
    return error  # type: ignore[no-any-return]


def test_unparsable_config_refuses_everything(beam: Beam) -> None:
    seed(beam)
    bad = beam.config("cursor")
    bad.parent.mkdir(parents=True)
    bad.write_text('{"mcpServers": {')
    before = snapshot(beam.home)
    done = beam.beam("setup", "--all", "--yes", "--json")
    assert_failed(done, "configInvalid", bad)
    assert snapshot(beam.home) == before
    text = beam.beam("setup", "--all", "--yes")
    assert text.code == 1 and text.stdout == "" and "fix:" in text.stderr


def test_unreadable_config(beam: Beam) -> None:
    loop = beam.config("claude-code")
    os.symlink(loop.name, loop)  # a link to itself: reading fails with ELOOP
    before = snapshot(beam.home)
    done = beam.beam("setup", "claude-code", "codex", "--yes", "--json")
    assert_failed(done, "configUnreadable", loop)
    assert snapshot(beam.home) == before


def test_read_only_config(beam: Beam) -> None:
    seed(beam)
    os.chmod(beam.config("codex"), 0o444)
    before = snapshot(beam.home)
    done = beam.beam("setup", "--all", "--yes", "--json")
    assert_failed(done, "configReadOnly", beam.config("codex"))
    assert snapshot(beam.home) == before


def test_directory_where_the_config_should_be(beam: Beam) -> None:
    beam.config("gemini").mkdir(parents=True)
    before = snapshot(beam.home)
    done = beam.beam("setup", "--all", "--yes", "--json")
    assert_failed(done, "configNotAFile", beam.config("gemini"))
    assert snapshot(beam.home) == before


def test_symlinked_config_is_written_through_the_link(beam: Beam) -> None:
    dotfiles = beam.home / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude.json"
    target.write_text('{\n  "numStartups": 4\n}\n')
    os.chmod(target, 0o640)
    os.symlink(target, beam.config("claude-code"))
    beam.setup_json("claude-code", "--yes")
    assert beam.config("claude-code").is_symlink()
    assert os.readlink(beam.config("claude-code")) == str(target)
    body = load_json(target)
    assert body["numStartups"] == 4 and body["mcpServers"]["lean-beam"]["command"] == beam.wrapper
    assert os.stat(target).st_mode & 0o777 == 0o640
    beam.beam("remove", "claude-code", "--yes")
    assert target.read_text() == '{\n  "numStartups": 4\n}\n'  # byte for byte as before


def test_disk_full_midway_rolls_every_file_back(beam: Beam) -> None:
    seed(beam)
    before = snapshot(beam.home)
    done = beam.beam("setup", "--all", "--yes", "--json", BEAM_SETUP_FAILPOINT="enospc-3")
    error = assert_failed(done, "setupFailed", beam.config("opencode"))
    assert "No space left on device" in str(error["message"])
    assert snapshot(beam.home) == before
    assert not (beam.root / "state" / "setup" / "journal.json").exists()


def test_file_size_limit_stops_before_any_change(beam: Beam) -> None:
    """RLIMIT_FSIZE: the kernel refuses to grow files past 4 KiB (a nearly full disk)."""
    seed(beam)
    big = {"mcpServers": {f"s{i}": {"command": f"/opt/s{i}"} for i in range(200)}}
    beam.config("cursor").parent.mkdir(parents=True)
    beam.config("cursor").write_text(json.dumps(big, indent=2) + "\n")
    before = snapshot(beam.home)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    done = subprocess.run(
        [str(beam.root / "bin" / "lean-beam"), "setup", "--all", "--yes", "--json"],
        env=beam.env(),
        cwd=beam.home,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    error = json.loads(done.stderr)["error"]
    assert error["category"] == "setupFailed" and "too large" in error["message"]
    assert snapshot(beam.home) == before


def test_two_setups_at_once(beam: Beam, tmp_path: Path) -> None:
    seed(beam)
    planned = planned_state(beam, tmp_path)
    procs = [beam.popen("setup", "--all", "--yes", "--json") for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    bodies = [json.loads(out) for out, _err in outs]
    created = [c["client"] for b in bodies for c in b["changes"] if c["action"] == "created"]
    assert sorted(created) == sorted(CLIENTS)  # each client was written by exactly one run
    assert snapshot(beam.home) == planned


STEPS = [
    "locked",
    "journal-written",
    "temp-0",
    "replaced-0",
    "temp-3",
    "replaced-3",
    f"replaced-{WRITES - 1}",
    "committing",
]


@pytest.mark.parametrize("step", STEPS)
def test_kill_at_each_step_then_recover(beam: Beam, tmp_path: Path, step: str) -> None:
    seed(beam)
    before = snapshot(beam.home)
    planned = planned_state(beam, tmp_path)
    done = beam.beam("setup", "--all", "--yes", BEAM_SETUP_FAILPOINT=step)
    assert done.code == -signal.SIGKILL
    now = snapshot(beam.home)
    for name in set(now) | set(before):
        if ".lean-beam-" in name:  # a temporary file of the interrupted replace
            continue
        assert now.get(name) in (before.get(name), planned.get(name)), name
    doctor = beam.beam("doctor", "--json")
    assert doctor.stdout, doctor.stderr
    assert snapshot(beam.home) == before  # rolled back, temporary files gone
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    if step != "locked":
        assert "recovered an interrupted" in checks["setup journal"]["detail"]
    body = beam.setup_json("--all", "--yes")
    assert "recovered" not in body
    assert snapshot(beam.home) == planned


def test_setup_recovers_and_keeps_a_file_edited_after_the_kill(beam: Beam) -> None:
    seed(beam)
    done = beam.beam("setup", "--all", "--yes", BEAM_SETUP_FAILPOINT="replaced-1")
    assert done.code == -signal.SIGKILL
    edited = beam.config("claude-code")  # written first, then edited by hand
    edited.write_text('{\n  "numStartups": 99\n}\n')
    body = beam.setup_json("--all", "--yes")
    recovered = body["recovered"]
    assert recovered["restored"] == [str(beam.config("codex"))]
    assert recovered["conflicts"] == [
        {"file": str(edited), "reason": "changed after the interruption; kept as it is now"}
    ]
    assert load_json(edited)["numStartups"] == 99  # the hand edit survives, entry added on top
    assert load_json(edited)["mcpServers"]["lean-beam"]["command"] == beam.wrapper


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_client_config_that_is_not_a_file_is_refused_without_a_stall(
    beam: Beam, kind: str
) -> None:
    config = beam.home / ".claude.json"
    if kind == "fifo":
        os.mkfifo(config)  # nothing ever writes to it: a plain read would wait forever
    else:
        config.symlink_to("/dev/zero")  # a plain read would never end
    done = beam.beam("setup", "claude-code", "--yes", "--json")
    assert done.code == 1, done
    assert "Traceback" not in done.stderr
    assert "regular file" in done.stderr or "cap" in done.stderr, done.stderr
    assert config.is_fifo() if kind == "fifo" else config.is_symlink()
