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
    run = dict(
        capture_output=True,
        text=True,
        cwd=str(project),
        timeout=120,
        env=minimal_env(**FAST_FAKE),
        stdin=subprocess.DEVNULL,
    )
    clean = subprocess.run(command, **run)  # type: ignore[call-overload]
    assert clean.returncode == 0, clean.stderr
    assert json.loads(clean.stdout)["ok"] is True
    (project / "Main.lean").write_text("theorem gap : True := by sorry\n")
    flagged = subprocess.run(command, **run)  # type: ignore[call-overload]
    assert flagged.returncode == 1, flagged.stderr
    assert json.loads(flagged.stdout)["flagged"] == ["gap"]
