"""The statement lock and the cheat policy, through `lean-beam lean lock` and a real server on the
fake `lake serve`: a locked statement weakened, deleted and restored; each cheat the strict
defaults refuse, and the same file once `.lean-beam/verify.toml` allows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.broker.fake import err, workspace
from tests.mcp.helpers import Server
from tests.verify.support import (
    BASIC,
    by_name,
    home_of,
    lake_server,
    lean_beam,
    make_project,
    read_lock,
    verify,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def test_a_locked_statement_cannot_be_weakened_or_dropped(
    servers: list[Server], project: Path
) -> None:
    home = home_of(project)
    server = lake_server(servers, home)
    before = verify(server, project, 1)
    assert before["ok"] is True and before["statements"] == []
    locked = lean_beam(project, home, "lock", "Demo/Basic.lean", "--declarations", "a_pos")
    assert locked.returncode == 0, locked.stderr
    body = read_lock(project)
    assert body["schema"] == 1 and list(body["statements"]) == ["Demo.a_pos"]
    entry = body["statements"]["Demo.a_pos"]
    assert entry["module"] == "Demo.Basic" and entry["path"] == "Demo/Basic.lean"
    assert len(entry["statement_sha256"]) == len(entry["signature_sha256"]) == 64
    assert entry["locked_at"].endswith("Z")
    held = verify(server, project, 2, receipt=before["receipt"])
    assert held["receipt_valid"] is False
    assert held["receipt_mismatch"] == [".lean-beam/statements.lock"]
    assert held["ok"] is True
    assert held["statements"] == [{"name": "Demo.a_pos", "status": "unchanged"}]

    basic = project / "Demo" / "Basic.lean"
    basic.write_text(
        BASIC.replace("theorem a_pos : 0 < a + 1 := by omega", "theorem a_pos : True := trivial")
    )
    weakened = verify(server, project, 3)
    assert weakened["ok"] is False
    assert weakened["statements"] == [{"name": "Demo.a_pos", "status": "changed"}]
    assert weakened["flagged"] == ["Demo.a_pos"]
    assert by_name(weakened)["Demo.a_pos"]["flags"] == []  # the proof itself is fine
    check = lean_beam(project, home, "lock", "Demo/Basic.lean", "--check")
    assert check.returncode == 1 and check.stdout.splitlines() == ["Demo.a_pos: changed"]

    basic.write_text(BASIC.replace("theorem a_pos : 0 < a + 1 := by omega\n", ""))
    gone = verify(server, project, 4)
    assert gone["ok"] is False
    assert gone["statements"] == [{"name": "Demo.a_pos", "status": "missing"}]
    assert gone["flagged"] == ["Demo.a_pos"]

    basic.write_text(BASIC)
    restored = verify(server, project, 5)
    assert restored["ok"] is True
    assert restored["statements"] == [{"name": "Demo.a_pos", "status": "unchanged"}]
    check = lean_beam(project, home, "lock", "Demo/Basic.lean", "--check", "--json")
    assert check.returncode == 0, check.stderr
    assert '"status":"unchanged"' in check.stdout


CHEATS = {
    "user axiom": (
        "axiom myAx : 1 = 2\ntheorem bad : 1 = 2 := myAx\n",
        "Demo.bad",
        "axiom:Demo.myAx",
        'allowed_axioms = ["propext", "Classical.choice", "Quot.sound", "Demo.myAx"]\n',
    ),
    "native_decide": (
        "theorem big : 10 < 20 := by native_decide\n",
        "Demo.big",
        "native:Demo.big._native.native_decide.ax_1",
        "forbid_native = false\n",
    ),
    "leftover exact?": (
        "theorem found : True := by\n  exact?\n",
        "Demo.found",
        "tactic:exact?",
        "forbid_search_tactics = false\n",
    ),
    "debug.skipKernelTC": (
        "set_option debug.skipKernelTC true in\ntheorem unchecked : True := trivial\n",
        "Demo.unchecked",
        "option:debug.skipKernelTC",
        "forbid_debug_options = false\n",
    ),
    "implemented_by": (
        "def fast : Nat := 0\n@[implemented_by fast] def slow : Nat := 0\n",
        "Demo.slow",
        "implemented_by:Demo.slow",
        "forbid_implemented_by = false\n",
    ),
}


@pytest.mark.parametrize("cheat", list(CHEATS))
def test_each_cheat_fails_until_the_policy_allows_it(
    servers: list[Server], project: Path, cheat: str
) -> None:
    snippet, name, flag, allowance = CHEATS[cheat]
    (project / "Demo" / "Basic.lean").write_text(
        BASIC.replace("end Demo\n", snippet + "end Demo\n")
    )
    server = lake_server(servers, home_of(project))
    strict = verify(server, project, 1)
    assert strict["ok"] is False and strict["complete"] is True
    also = ["Demo.myAx"] if cheat == "user axiom" else []  # the axiom is a constant too
    assert strict["flagged"] == [*also, name], strict["declarations"]
    assert flag in by_name(strict)[name]["flags"]
    (project / ".lean-beam").mkdir()
    (project / ".lean-beam" / "verify.toml").write_text(allowance)
    allowed = verify(server, project, 2, receipt=strict["receipt"])
    assert allowed["receipt_valid"] is False
    assert allowed["receipt_mismatch"] == [".lean-beam/verify.toml"]
    assert allowed["ok"] is True, allowed["declarations"]
    assert allowed["policy"] != strict["policy"]


def test_a_broken_policy_file_is_an_error_that_names_the_fix(
    servers: list[Server], project: Path
) -> None:
    (project / ".lean-beam").mkdir()
    policy = project / ".lean-beam" / "verify.toml"
    server = lake_server(servers, home_of(project))
    args = {**workspace(project), "path": "Demo/Basic.lean"}
    for rid, text in enumerate(
        ["forbid_sory = false\n", "forbid_sorry = 0\n", "allowed_axioms = 'propext'\n", "= x\n"]
    ):
        policy.write_text(text)
        error = err(server, rid, "lean_verify", args)
        assert error["code"] == "invalidParams" and error["data"]["reason"] == "badPolicy", text
        assert error["data"]["fix"]
    (project / ".lean-beam" / "statements.lock").write_text('{"schema": 7}\n')
    policy.unlink()
    error = err(server, 9, "lean_verify", args)
    assert error["data"]["reason"] == "badLock" and "lean-beam lean lock" in error["data"]["fix"]


def test_a_debug_option_set_by_the_lakefile_fails_ok(servers: list[Server], project: Path) -> None:
    (project / "lakefile.toml").write_text(
        'name = "demo"\nmoreLeanArgs = ["-Ddebug.skipKernelTC=true"]\n'
    )
    result = verify(lake_server(servers, home_of(project)), project, 1)
    assert result["ok"] is False and result["flagged"] == ["lakefile.toml:2"]
    assert by_name(result)["lakefile.toml:2"] == {
        "name": "lakefile.toml:2",
        "axioms": None,
        "flags": ["option:debug.skipKernelTC"],
    }
