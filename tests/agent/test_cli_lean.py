"""`lean-beam lean ...`: the Lean tools from a shell, on the same broker, without MCP."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.broker.fake import FAKE_CMD, FAST_FAKE
from tests.mcp.helpers import minimal_env

SOURCE = "namespace Demo\n\ntheorem two : 1 + 1 = 2 := by\n  sorry\n\nend Demo\n"


def lean(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        str(Path(sys.executable).with_name("lean-beam")),
        "lean",
        *args,
        "--lean-cmd",
        FAKE_CMD,
    ]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=str(project),
        env=minimal_env(**FAST_FAKE),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_sync_prints_diagnostics_and_exits_1_on_errors(project: Path) -> None:
    (project / "Main.lean").write_text(SOURCE)
    clean = lean(project, "sync", "Main.lean")
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout.splitlines() == [
        "Main.lean: version 1, checked: 0 errors, 1 warning",
        "Main.lean:3:9: warning: declaration uses `sorry`",
    ]
    (project / "Bad.lean").write_text("def x : Nat := foo\n")
    bad = lean(project, "sync", "Bad.lean", "--json")
    assert bad.returncode == 1
    body = json.loads(bad.stdout)
    assert body["diagnostics"]["counts"]["error"] == 1 and body["diagnostics"]["complete"]


def test_positions_goals_and_probes(project: Path) -> None:
    (project / "Main.lean").write_text(SOURCE)
    goals = lean(
        project, "goals", "Main.lean", "--declaration", "Demo.two", "--sorry", "1", "--json"
    )
    assert goals.returncode == 0, goals.stderr
    body = json.loads(goals.stdout)
    assert body["position"] == {"line": 3, "character": 2}
    assert [g["target"] for g in body["goals"]] == ["1 + 1 = 2"]
    probe = lean(
        project,
        "run-at",
        "Main.lean",
        "--line1",
        "4",
        "--match",
        "sorry",
        "--text",
        "rfl",
        "--json",
    )
    assert probe.returncode == 0 and json.loads(probe.stdout)["success"] is True
    failing = lean(
        project, "run-at", "Main.lean", "--line1", "4", "--match", "sorry", "--text", "exact nope"
    )
    assert failing.returncode == 1
    todo = lean(project, "todo", "Main.lean")
    assert "4:3: sorry: declaration uses `sorry`" in todo.stdout.splitlines()


def test_tool_errors_name_the_fix(project: Path) -> None:
    (project / "Main.lean").write_text(SOURCE)
    missing = lean(project, "hover", "Main.lean", "--line1", "4", "--match", "absent")
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.startswith("error: invalidParams: ")
    assert "\nfix: " in missing.stderr
    as_json = lean(project, "hover", "Main.lean", "--line1", "4", "--match", "absent", "--json")
    error = json.loads(as_json.stderr)["error"]
    assert error["data"]["reason"] == "noMatch" and error["data"]["fix"]


def test_verify_builds_with_lake_and_exits_1_on_a_sorry(project: Path) -> None:
    import shlex

    from tests.mcp.helpers import REPO

    lake_serve = shlex.join([str(REPO / "tests" / "fake_lean" / "bin" / "lake"), "serve"])
    (project / "lake-manifest.json").write_text('{"version": 7, "packages": []}\n')
    (project / "Main.lean").write_text("theorem fine : True := trivial\n")
    command = [
        str(Path(sys.executable).with_name("lean-beam")),
        "lean",
        "verify",
        "Main.lean",
        "--json",
        "--lean-cmd",
        lake_serve,
    ]
    home = project.parent / "home"  # the receipt key goes to this HOME's state directory
    home.mkdir()
    run = dict(
        capture_output=True,
        text=True,
        cwd=str(project),
        timeout=120,
        env=minimal_env(**FAST_FAKE, HOME=str(home)),
        stdin=subprocess.DEVNULL,
    )
    clean = subprocess.run(command, **run)  # type: ignore[call-overload]
    assert clean.returncode == 0, clean.stderr
    assert json.loads(clean.stdout)["ok"] is True
    (project / "Main.lean").write_text("theorem gap : True := by sorry\n")
    flagged = subprocess.run(command, **run)  # type: ignore[call-overload]
    assert flagged.returncode == 1, flagged.stderr
    assert json.loads(flagged.stdout)["flagged"] == ["gap"]
    assert (home / ".local" / "state" / "beam" / "verify-receipt.key").is_file()


LOCKED = "theorem one : 1 + 1 = 2 := by omega\ntheorem two : 2 = 2 := rfl\ndef three : Nat := 3\n"


def lock(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    from tests.verify.support import LAKE_SERVE

    command = [str(Path(sys.executable).with_name("lean-beam")), "lean", "lock", *args]
    return subprocess.run(
        [*command, "--lean-cmd", LAKE_SERVE],
        capture_output=True,
        text=True,
        cwd=str(project),
        timeout=120,
        env=minimal_env(**FAST_FAKE, HOME=str(home)),
        stdin=subprocess.DEVNULL,
    )


def test_lock_records_each_theorem_and_check_reports_changes(project: Path) -> None:
    home = project.parent / "home"
    home.mkdir()
    (project / "Main.lean").write_text(LOCKED)
    (project / "Other.lean").write_text("theorem other : True := trivial\n")
    wrote = lock(project, home, "Main.lean")
    assert wrote.returncode == 0, wrote.stderr
    assert wrote.stdout.splitlines()[:2] == ["locked one", "locked two"]  # theorems only
    path = project / ".lean-beam" / "statements.lock"
    body = json.loads(path.read_text())
    assert body["schema"] == 1 and sorted(body["statements"]) == ["one", "two"]
    assert set(body["statements"]["one"]) == {
        "module",
        "path",
        "statement_sha256",
        "signature_sha256",
        "locked_at",
    }
    more = lock(project, home, "Other.lean", "--declarations", "other", "--json")
    assert more.returncode == 0, more.stderr
    assert json.loads(more.stdout)["locked"] == ["other"]
    assert sorted(json.loads(path.read_text())["statements"]) == ["one", "other", "two"]

    same = lock(project, home, "Main.lean", "--check")
    assert same.returncode == 0 and same.stdout.splitlines() == ["one: unchanged", "two: unchanged"]
    before = path.read_text()
    (project / "Main.lean").write_text(LOCKED.replace("1 + 1 = 2 := by omega", "True := trivial"))
    changed = lock(project, home, "Main.lean", "--check", "--json")
    assert changed.returncode == 1
    assert json.loads(changed.stdout) == {
        "schema": 1,
        "statements": [
            {"name": "one", "status": "changed"},
            {"name": "two", "status": "unchanged"},
        ],
    }
    assert path.read_text() == before  # --check writes nothing
    (project / "Main.lean").write_text("theorem two : 2 = 2 := rfl\n")
    gone = lock(project, home, "Main.lean", "--check")
    assert gone.returncode == 1 and gone.stdout.splitlines()[0] == "one: missing"
    relocked = lock(project, home, "Main.lean")
    assert relocked.returncode == 0 and "unlocked one" in relocked.stdout.splitlines()
    assert sorted(json.loads(path.read_text())["statements"]) == ["other", "two"]


def test_lock_refuses_unknown_names_and_files_that_do_not_build(project: Path) -> None:
    home = project.parent / "home"
    home.mkdir()
    (project / "Main.lean").write_text(LOCKED)
    unknown = lock(project, home, "Main.lean", "--declarations", "one,nope")
    assert unknown.returncode == 1 and unknown.stderr.startswith("error: invalidParams: ")
    assert "nope" in unknown.stderr and "\nfix: " in unknown.stderr
    assert not (project / ".lean-beam" / "statements.lock").exists()
    (project / "Main.lean").write_text("theorem bad : 1 = 1 := nope\n")
    broken = lock(project, home, "Main.lean", "--json")
    assert broken.returncode == 1
    error = json.loads(broken.stderr)["error"]
    assert error["data"]["reason"] == "notBuilt" and error["data"]["fix"]
    assert not (project / ".lean-beam" / "statements.lock").exists()
