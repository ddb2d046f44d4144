"""The fake lake and elan executables, run with the short PATH MCP clients use."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.lsp.harness import FAKE_DIR, FAKE_LAKE, base_env

ELAN = FAKE_DIR / "bin" / "elan"


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=cwd,
        env=base_env(cwd.parent),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_lake_version_line(project: Path) -> None:
    done = _run([str(FAKE_LAKE), "--version"], project)
    assert done.returncode == 0
    assert done.stdout.startswith("Lake version ") and "(Lean version 4.33.0)" in done.stdout


def test_lake_build_writes_artifacts(project: Path) -> None:
    (project / "Proj").mkdir()
    (project / "Proj" / "Basic.lean").write_text("def a : Nat := 1\n")
    done = _run([str(FAKE_LAKE), "build", "+Proj.Basic"], project)
    assert done.returncode == 0, done.stderr
    lib = project / ".lake" / "build" / "lib" / "lean" / "Proj"
    for name in ("Basic.olean", "Basic.ilean", "Basic.trace", "Basic.olean.trace"):
        assert (lib / name).is_file(), name
    assert (project / ".lake" / "build" / "ir" / "Proj" / "Basic.c").is_file()


def test_lake_build_fails_on_errors_and_unknown_modules(project: Path) -> None:
    (project / "Bad.lean").write_text("def a : Nat := nope\n")
    done = _run([str(FAKE_LAKE), "build", "+Bad"], project)
    assert done.returncode == 1 and "Unknown identifier `nope`" in done.stdout
    assert not (project / ".lake" / "build" / "lib" / "lean" / "Bad.olean").exists()
    assert _run([str(FAKE_LAKE), "build", "+Missing"], project).returncode == 1


def test_elan(project: Path) -> None:
    which = _run([str(ELAN), "which", "lake"], project)
    assert which.returncode == 0 and Path(which.stdout.strip()) == FAKE_LAKE
    assert _run([str(ELAN), "--version"], project).stdout.startswith("elan ")
    show = _run([str(ELAN), "show"], project)
    assert "leanprover/lean4:v4.33.0" in show.stdout
