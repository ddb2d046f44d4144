"""The same scenarios against a real ``lake serve`` (only when ``lake`` is on PATH).

No Lean toolchain exists on the development machines, so these have never run there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.broker.conftest import start
from tests.mcp.helpers import Server, call, structured

pytestmark = [
    pytest.mark.real_lean,
    pytest.mark.skipif(shutil.which("lake") is None, reason="no `lake` on PATH"),
]


@pytest.fixture
def lean_project(tmp_path: Path) -> Path:
    root = tmp_path / "real"
    root.mkdir()
    version = subprocess.run(["lake", "--version"], capture_output=True, text=True).stdout
    del version  # the toolchain elan picks by default is the one under test
    (root / "lakefile.toml").write_text(
        'name = "real"\ndefaultTargets = ["Main"]\n[[lean_lib]]\nname = "Main"\n'
    )
    (root / "Main.lean").write_text("def answerA : Nat := 42\n")
    (root / "Bad.lean").write_text("def x : Nat := foo\n")
    return root.resolve()


def _ok(server: Server, rid: int, tool: str, args: dict) -> dict:
    reply = server.ask(
        call(rid, tool, args),
    )
    assert reply["result"]["isError"] is False, reply
    return structured(reply)


def test_real_sync_hover_errors(servers: list[Server], lean_project: Path) -> None:
    lake = shutil.which("lake")
    assert lake is not None
    server = start(servers, "--lean-cmd", f"{lake} serve --", PATH=os.environ["PATH"])
    ws = {"workspace": {"root": str(lean_project)}}
    synced = _ok(server, 1, "lean_sync", {**ws, "path": "Main.lean"})
    assert synced["readiness"]["save_ready"] is True
    hover = _ok(
        server,
        2,
        "lean_hover",
        {**ws, "path": "Main.lean", "version": synced["version"], "line": 0, "character": 4},
    )
    assert "answerA" in hover["contents"]["value"]
    bad = _ok(server, 3, "lean_sync", {**ws, "path": "Bad.lean"})
    assert bad["readiness"]["reason"] == "documentErrors"
    saved = _ok(server, 4, "lean_save", {**ws, "path": "Main.lean"})
    assert Path(saved["olean"]).is_file()
    assert server.close()[0] == 0
