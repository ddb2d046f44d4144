"""`lean-beam lean ...` prints text a person reads (goals as Lean shows them, a verdict for
verify, one line per tactic or declaration), `--json` the tool's result, and errors in the
command's own flags."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from tests.broker.fake import FAKE_CMD, FAST_FAKE
from tests.mcp.helpers import REPO, minimal_env

SOURCE = (
    "namespace Demo\n\ntheorem two (a b : Nat) (h : a = b) : 1 + 1 = 2 := by\n  sorry\n\nend Demo\n"
)
LAKE_SERVE = shlex.join([str(REPO / "tests" / "fake_lean" / "bin" / "lake"), "serve"])


def lean(
    project: Path, *args: str, lean_cmd: str | None = FAKE_CMD
) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("lean-beam")), "lean", *args]
    if lean_cmd is not None:
        command += ["--lean-cmd", lean_cmd]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=str(project),
        env=minimal_env(**FAST_FAKE),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_goals_print_as_lean_shows_them(project: Path) -> None:
    (project / "Main.lean").write_text(SOURCE)
    done = lean(project, "goals", "Main.lean", "--declaration", "Demo.two", "--sorry", "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Main.lean:4:3 (before): 1 goal",
        "a b : Nat",
        "h : a = b",
        "⊢ 1 + 1 = 2",
    ]
    as_json = lean(project, "goals", "Main.lean", "--line1", "4", "--match", "sorry", "--json")
    body = json.loads(as_json.stdout)
    assert [h["names"] for h in body["goals"][0]["hyps"]] == [["a", "b"], ["h"]]


def test_hover_and_run_at_are_short_text(project: Path) -> None:
    (project / "Main.lean").write_text(SOURCE)
    hover = lean(project, "hover", "Main.lean", "--line1", "3", "--match", "two")
    assert hover.returncode == 0, hover.stderr
    assert hover.stdout.startswith("Main.lean:3:9: ") and "{" not in hover.stdout
    assert "1 + 1 = 2" in hover.stdout
    ok = lean(project, "run-at", "Main.lean", "--line1", "4", "--match", "sorry", "--text", "rfl")
    assert ok.returncode == 0 and ok.stdout.splitlines() == [
        "Main.lean:4:3: succeeded",
        "no goals left",
    ]
    bad = lean(
        project, "run-at", "Main.lean", "--line1", "4", "--match", "sorry", "--text", "exact nope"
    )
    assert bad.returncode == 1
    assert bad.stdout.splitlines()[:3] == [
        "Main.lean:4:3: failed",
        "error: Unknown identifier `nope`",
        "1 goal left:",
    ]
    assert bad.stdout.splitlines()[-1] == "⊢ 1 + 1 = 2"


def test_try_prints_one_line_per_tactic(project: Path) -> None:
    (project / "Main.lean").write_text(SOURCE)
    done = lean(
        project,
        *("try", "Main.lean", "--line1", "4", "--match", "sorry"),
        *("--tactic", "exact nope", "--tactic", "rfl", "--tactic", "exact nope"),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[1] Main.lean:4:3  exact nope: failed: Unknown identifier `nope`",
        "[2] Main.lean:4:3  rfl: ok, no goals left",
        "[3] Main.lean:4:3  exact nope: failed: Unknown identifier `nope`",
    ]
    failing = lean(
        project,
        "try",
        "Main.lean",
        "--line1",
        "4",
        "--match",
        "sorry",
        "--tactic",
        "exact nope",
        "--json",
    )
    assert failing.returncode == 1
    answer = json.loads(failing.stdout)
    assert answer["positions"][0]["succeeded"] == [] and answer["positions"][0]["failed"]


def test_verify_prints_a_verdict_and_what_failed(project: Path) -> None:
    (project / "lake-manifest.json").write_text('{"version": 7, "packages": []}\n')
    (project / "Main.lean").write_text("theorem fine : True := trivial\n")
    clean = lean(project, "verify", "Main.lean", lean_cmd=LAKE_SERVE)
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout.startswith("verified: 1 module built (Main), 1 declaration checked")
    (project / "Main.lean").write_text(SOURCE + "theorem bad : True := foo\n")
    failed = lean(project, "verify", "Main.lean", lean_cmd=LAKE_SERVE)
    assert failed.returncode == 1
    lines = failed.stdout.splitlines()
    assert lines[0].startswith("NOT verified: ")
    assert any(line.startswith("Main.lean:7: error: ") and "foo" in line for line in lines)


def test_search_prints_one_line_per_declaration(project: Path) -> None:
    (project / "Main.lean").write_text(SOURCE)
    done = lean(project, "search", "two", lean_cmd=None)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Main.lean:3: theorem Demo.two (a b : Nat) (h : a = b) : 1 + 1 = 2"
    ]
    as_json = json.loads(lean(project, "search", "two", "--json", lean_cmd=None).stdout)
    assert as_json["hits"][0]["name"] == "Demo.two"
    none = lean(project, "search", "zzzqqq", lean_cmd=None)
    assert none.returncode == 1 and none.stdout.startswith("no declarations found")


def test_errors_name_the_command_flags(project: Path) -> None:
    (project / "Main.lean").write_text(SOURCE)
    outside = lean(project, "hover", "Main.lean", "--line1", "99", "--match", "x")
    assert outside.returncode == 1 and outside.stdout == ""
    assert outside.stderr.splitlines() == [
        "error: invalidParams: --line1 99 is outside the file (7 lines, 1-based)",
        "fix: read the file and pass text that occurs on that line (--line1 is 1-based), or "
        "use --line with --character",
    ]
    half = lean(project, "goals", "Main.lean", "--line1", "4")
    assert half.returncode == 1
    assert half.stderr.splitlines() == [
        "error: invalidInput: --match is missing (it goes with --line1)",
        "fix: pass --match too",
    ]
    none = lean(project, "goals", "Main.lean", "--json")
    error = json.loads(none.stderr)["error"]
    assert "--line with --character" in error["message"] and error["data"]["fix"]
    slow = lean(project, "goals", "Main.lean", "--line1", "4", "--match", "sorry", "--wait-ms", "0")
    assert slow.returncode == 1 and "--wait-ms" in slow.stderr and "wait_ms" not in slow.stderr


def test_try_errors_name_its_flags(project: Path) -> None:
    (project / "Main.lean").write_text(SOURCE)
    at = ("try", "Main.lean", "--line1", "4", "--match", "sorry")
    nothing = lean(project, *at)
    assert nothing.returncode == 1
    assert "--suggest" in nothing.stderr and "--tactic" in nothing.stderr
    assert "suggest: true" not in nothing.stderr and "in tactics" not in nothing.stderr
    blank = lean(project, *at, "--tactic", "rfl", "--tactic", " ")
    assert blank.returncode == 1 and "error: invalidInput: --tactic 2 is blank" in blank.stderr
