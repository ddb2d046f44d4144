"""The ``beam-cli mcp-config`` path with the fake ``lake``: sessions through Lake, saves."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.broker.conftest import start
from tests.broker.fake import FAST_FAKE, err, fake_server, ok, workspace
from tests.mcp.helpers import REPO, Server

FAKE_BIN = REPO / "tests" / "fake_lean" / "bin"


def _beam_cli() -> str:
    found = shutil.which("beam-cli", path=os.path.dirname(sys.executable))
    if found is None:
        pytest.skip("beam-cli is not installed next to the test interpreter")
    return found


def lake_server(servers: list[Server], *flags: str) -> Server:
    path = f"{FAKE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    return start(servers, "--beam-cli", _beam_cli(), *flags, **{**FAST_FAKE, "PATH": path})


def test_save_through_lake(servers: list[Server], project: Path) -> None:
    (project / "A").mkdir()
    (project / "A" / "B.lean").write_text("def b : Nat := 1\n")
    server = lake_server(servers)
    ws = workspace(project)
    saved = ok(server, 1, "lean_save", {**ws, "path": "A/B.lean"})
    assert saved["module"] == "A.B" and saved["path"] == "A/B.lean"
    assert saved["olean"] == str(project / ".lake/build/lib/lean/A/B.olean")
    assert Path(saved["olean"]).is_file() and Path(saved["ilean"]).is_file()
    assert len(saved["source_hash"]) == 16
    assert saved["sync"]["readiness"]["save_ready"] is True
    assert "workspace" not in saved["sync"] and "document_progress" in saved
    closed = ok(server, 2, "lean_close_save", {**ws, "path": "A/B.lean"})
    assert closed["closed"] is True and closed["saved"]["module"] == "A.B"
    assert "workspace" not in closed["saved"] and "document_progress" not in closed["saved"]


def test_save_refuses_errors_and_non_modules(servers: list[Server], project: Path) -> None:
    (project / "Bad.lean").write_text("def x : Nat := foo\n")
    (project / "lakefile.lean").write_text("-- not a module\n")
    server = lake_server(servers)
    ws = workspace(project)
    bad = err(server, 1, "lean_save", {**ws, "path": "Bad.lean"})
    assert bad["code"] == "invalidParams"
    assert bad["data"]["sync"]["readiness"]["reason"] == "documentErrors"
    assert not (project / ".lake" / "build" / "lib" / "lean" / "Bad.olean").exists()
    not_module = err(server, 2, "lean_save", {**ws, "path": "lakefile.lean"})
    assert not_module["code"] == "saveTargetNotModule"


def test_plain_server_cannot_save(servers: list[Server], project: Path) -> None:
    server = fake_server(servers)
    error = err(server, 1, "lean_save", {**workspace(project), "path": "Main.lean"})
    assert error["code"] == "saveUnsupportedSetup"


def test_broken_lakefile(servers: list[Server], project: Path) -> None:
    (project / "lakefile.toml").write_text("FAKE_BROKEN = true\n")
    server = lake_server(servers)
    error = err(server, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    assert error["code"] == "runtimeSetup"
    assert error["data"]["category"] == "lakeConfigInvalid"
    assert error["data"]["stderr_tail"]


def test_stale_imports_give_a_recovery_plan(servers: list[Server], project: Path) -> None:
    (project / "A.lean").write_text("def a : Nat := 1\n")
    (project / "B.lean").write_text("import A\ndef b : Nat := a\n")
    server = lake_server(servers)
    ws = workspace(project)
    ok(server, 1, "lean_save", {**ws, "path": "A.lean"})
    ok(server, 2, "lean_sync", {**ws, "path": "B.lean"})
    (project / "A.lean").write_text("def a : Nat := 2\n")
    ok(server, 3, "lean_sync", {**ws, "path": "A.lean"})
    stale = err(server, 4, "lean_sync", {**ws, "path": "B.lean"})
    assert stale["code"] == "syncBarrierIncomplete"
    assert stale["data"]["targetPath"] == "B.lean"
    assert stale["data"]["staleDirectDeps"][0]["module"] == "A"
    plan = stale["data"]["recoveryPlan"]
    assert {"tool": "lean_save", "path": "A.lean"} in plan
    assert plan[-1]["command"] == "lake build"
    ok(server, 5, "lean_save", {**ws, "path": "A.lean"})
    refreshed = ok(server, 6, "lean_refresh", {**ws, "path": "B.lean"})
    assert refreshed["readiness"]["save_ready"] is True
