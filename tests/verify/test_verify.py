"""``lean_verify`` through a real server on the fake ``lake serve``: the batch build of the reverse
dependency cone, axioms from the built modules, flags, and receipts that hold until a cone
source changes."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.broker.conftest import start
from tests.broker.fake import FAST_FAKE, err, fake_processes, fake_server, ok, workspace
from tests.mcp.helpers import REPO, Server, call

LAKE_SERVE = shlex.join([str(REPO / "tests" / "fake_lean" / "bin" / "lake"), "serve"])

BASIC = """\
namespace Demo
def a : Nat := 1
theorem a_pos : 0 < a + 1 := by omega
theorem plain : True := trivial
private theorem hidden : True := trivial
end Demo
"""
USE = "import Demo.Basic\nnamespace Demo\ndef b : Nat := a + 1\nend Demo\n"
MAIN = "import Demo.Use\ndef c : Nat := Demo.b\n"
OTHER = "def unrelated : Nat := 7\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "Demo").mkdir(parents=True)
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "lakefile.toml").write_text('name = "demo"\n')
    (root / "lake-manifest.json").write_text('{"version": 7, "packages": []}\n')
    (root / "Demo" / "Basic.lean").write_text(BASIC)
    (root / "Demo" / "Use.lean").write_text(USE)
    (root / "Demo" / "Other.lean").write_text(OTHER)
    (root / "Main.lean").write_text(MAIN)
    return root.resolve()


def lake_server(servers: list[Server]) -> Server:
    return start(servers, "--lean-cmd", LAKE_SERVE, **FAST_FAKE)


def verify(server: Server, root: Path, rid: int, **args: object) -> dict:
    return ok(server, rid, "lean_verify", {**workspace(root), "path": "Demo/Basic.lean", **args})


def by_module(result: dict) -> dict[str, dict]:
    return {m["module"]: m for m in result["modules"]}


def by_name(result: dict) -> dict[str, dict]:
    return {d["name"]: d for d in result["declarations"]}


def test_a_clean_cone_verifies_with_axioms_and_a_receipt(
    servers: list[Server], project: Path
) -> None:
    server = lake_server(servers)
    result = verify(server, project, 1)
    assert result["ok"] is True and result["complete"] is True, result
    assert [m["module"] for m in result["modules"]] == ["Demo.Basic", "Demo.Use", "Main"]
    assert all(m["built"] and m["errors"] == [] for m in result["modules"])
    assert by_module(result)["Demo.Use"]["path"] == "Demo/Use.lean"
    assert by_name(result) == {
        "Demo.a": {"name": "Demo.a", "axioms": [], "flags": []},
        "Demo.a_pos": {"name": "Demo.a_pos", "axioms": ["propext"], "flags": []},
        "Demo.plain": {"name": "Demo.plain", "axioms": [], "flags": []},
    }
    assert result["flagged"] == [] and result["toolchain"] == "leanprover/lean4:v4.24.0"
    assert len(result["manifest_hash"]) == 16
    assert sorted(result["sources"]) == ["Demo.Basic", "Demo.Use", "Main"]
    assert result["receipt"]["ok"] is True
    assert (project / ".lake" / "build" / "lib" / "lean" / "Main.olean").is_file()
    assert not (project / ".lake" / "build" / "lib" / "lean" / "Demo" / "Other.olean").exists()


def test_an_edit_that_breaks_a_downstream_module_is_not_ok_and_names_it(
    servers: list[Server], project: Path
) -> None:
    server = lake_server(servers)
    assert verify(server, project, 1)["ok"] is True
    (project / "Demo" / "Basic.lean").write_text(
        BASIC.replace("def a ", "def a2 ").replace("0 < a + 1", "0 < a2 + 1")
    )
    result = verify(server, project, 2)
    assert result["ok"] is False and result["complete"] is True
    modules = by_module(result)
    assert modules["Demo.Basic"]["built"] is True
    assert modules["Demo.Use"]["built"] is False
    [error] = modules["Demo.Use"]["errors"]
    assert error["path"] == "Demo/Use.lean" and error["line"] == 3
    assert "Unknown identifier `a`" in error["message"]
    assert modules["Main"] == {"module": "Main", "path": "Main.lean", "built": False, "errors": []}
    assert result["build"]["exit_code"] == 1 and result["receipt"]["ok"] is False


def test_sorry_a_custom_axiom_and_unsafe_markers_are_flagged_by_name(
    servers: list[Server], project: Path
) -> None:
    (project / "Demo" / "Basic.lean").write_text(
        BASIC.replace(
            "end Demo\n",
            "axiom myAx : 1 = 2\n"
            "theorem bad : 1 = 2 := myAx\n"
            "theorem todo : 1 + 1 = 2 := by sorry\n"
            "unsafe def fast : Nat := 0\n"
            "@[implemented_by fast] def slow : Nat := 0\n"
            "set_option debug.skipKernelTC true in\n"
            "theorem unchecked : True := trivial\n"
            "end Demo\n",
        )
    )
    server = lake_server(servers)
    result = verify(server, project, 1)
    assert result["ok"] is False and all(m["built"] for m in result["modules"])
    names = by_name(result)
    assert names["Demo.bad"] == {
        "name": "Demo.bad",
        "axioms": ["Demo.myAx"],
        "flags": ["axiom:Demo.myAx"],
    }
    assert names["Demo.todo"] == {"name": "Demo.todo", "axioms": ["sorryAx"], "flags": ["sorryAx"]}
    assert names["Demo.fast"]["flags"] == ["unsafe"]
    assert names["Demo.slow"]["flags"] == ["implemented_by"]
    assert names["Demo.unchecked"]["flags"] == ["skipKernelTC"]
    assert sorted(result["flagged"]) == [
        "Demo.bad",
        "Demo.fast",
        "Demo.slow",
        "Demo.todo",
        "Demo.unchecked",
    ]
    assert names["Demo.plain"]["flags"] == [] and "Demo.myAx" not in names
    named = verify(server, project, 2, declarations=["a_pos", "Demo.plain"])
    assert named["ok"] is True and [d["name"] for d in named["declarations"]] == [
        "Demo.a_pos",
        "Demo.plain",
    ]
    missing = verify(server, project, 3, declarations=["nothing_here"])
    assert missing["ok"] is False and missing["flagged"] == ["nothing_here"]
    assert missing["declarations"][0]["flags"] == ["notFound"]


def test_a_receipt_holds_until_a_cone_source_changes(servers: list[Server], project: Path) -> None:
    first = lake_server(servers)
    receipt = verify(first, project, 1)["receipt"]
    fresh = lake_server(servers)  # a new process: answering must not need Lean or Lake
    held = verify(fresh, project, 1, receipt=receipt)
    assert held["receipt_valid"] is True and held["stale"] == [] and held["ok"] is True
    assert held["receipt"] == receipt and [m["built"] for m in held["modules"]] == [True] * 3
    assert ok(fresh, 2, "beam_version", {})["runtime_active"] is False
    (project / "Demo" / "Other.lean").write_text(OTHER + "def more : Nat := 8\n")
    assert verify(fresh, project, 3, receipt=receipt)["receipt_valid"] is True
    (project / "Demo" / "Use.lean").write_text(USE + "def d : Nat := 2\n")
    rebuilt = verify(fresh, project, 4, receipt=receipt)
    assert rebuilt["receipt_valid"] is False and rebuilt["stale"] == ["Demo.Use"]
    assert rebuilt["ok"] is True and rebuilt["receipt"] != receipt
    assert ok(fresh, 5, "beam_version", {})["runtime_active"] is True
    again = verify(fresh, project, 6, receipt=rebuilt["receipt"])
    assert again["receipt_valid"] is True
    (project / "Extra.lean").write_text("import Demo.Basic\ndef e : Nat := Demo.a\n")
    joined = verify(fresh, project, 7, receipt=rebuilt["receipt"])
    assert joined["receipt_valid"] is False and joined["stale"] == ["Extra"]
    other_files = verify(fresh, project, 8, receipt=joined["receipt"], path="Demo/Use.lean")
    assert other_files["receipt_valid"] is False and other_files["receipt_mismatch"] == ["targets"]


def test_lake_progress_is_forwarded(servers: list[Server], project: Path) -> None:
    server = lake_server(servers)
    args = {**workspace(project), "path": "Demo/Basic.lean"}
    server.send(call(1, "lean_verify", args, call_meta={"progressToken": "v"}))
    reply, before = server.read_until(1)
    assert reply["result"]["isError"] is False
    messages = [
        m["params"]["message"] for m in before if m.get("method") == "notifications/progress"
    ]
    assert "lean_verify: ✔ [1/3] Built Demo.Basic" in messages, messages
    assert "lean_verify: ✔ [3/3] Built Main" in messages


def test_bad_input_is_a_structured_error_with_a_fix(servers: list[Server], project: Path) -> None:
    server = lake_server(servers)
    ws = workspace(project)
    both = err(server, 1, "lean_verify", {**ws, "path": "Main.lean", "paths": ["Main.lean"]})
    neither = err(server, 2, "lean_verify", ws)
    assert both["code"] == neither["code"] == "invalidInput" and both["data"]["fix"]
    receipt = verify(server, project, 3)["receipt"]
    forged = {**receipt, "ok": not receipt["ok"]}
    bad = err(server, 4, "lean_verify", {**ws, "path": "Demo/Basic.lean", "receipt": forged})
    assert bad["code"] == "invalidInput" and bad["data"]["reason"] == "badReceipt"
    assert bad["data"]["fix"]
    (project / "notes.txt").write_text("hi\n")
    (project / ".hidden").mkdir()
    (project / ".hidden" / "X.lean").write_text("def x := 1\n")
    hidden = err(server, 5, "lean_verify", {**ws, "path": ".hidden/X.lean"})
    assert hidden["code"] == "invalidParams" and hidden["data"]["fix"]


def test_several_files_verify_together(servers: list[Server], project: Path) -> None:
    server = lake_server(servers)
    args = {**workspace(project), "paths": ["Demo/Other.lean", "Demo/Basic.lean"]}
    result = ok(server, 1, "lean_verify", args)
    assert result["ok"] is True
    assert [m["module"] for m in result["modules"]] == [
        "Demo.Basic",
        "Demo.Other",
        "Demo.Use",
        "Main",
    ]
    assert "unrelated" in by_name(result) and "Demo.a" in by_name(result)
    assert result["receipt"]["targets"] == ["Demo/Basic.lean", "Demo/Other.lean"]


def test_a_build_that_outlasts_wait_ms_is_incomplete_and_lake_is_stopped(
    servers: list[Server], project: Path
) -> None:
    server = start(servers, "--lean-cmd", LAKE_SERVE, **FAST_FAKE, FAKE_LAKE_BUILD_MS="20000")
    result = verify(server, project, 1, wait_ms=1500)
    assert result["ok"] is False and result["complete"] is False
    assert result["receipt"] is None and result["retry_after_ms"] > 0
    assert not any(m["built"] for m in result["modules"])
    assert result["build"]["finished"] is False
    assert [d["flags"] for d in result["declarations"]] == [["notBuilt"]] * 3
    lakes = [p for p in fake_processes(project) if "build" in p.info["cmdline"]]
    assert lakes == []


def test_a_session_not_served_by_lake_cannot_verify(servers: list[Server], project: Path) -> None:
    server = fake_server(servers)  # plain `lean --server`: no Lake to build with
    error = err(server, 1, "lean_verify", {**workspace(project), "path": "Demo/Basic.lean"})
    assert error["code"] == "saveUnsupportedSetup" and error["data"]["fix"]
    assert not (project / ".lake").exists()


def test_importers_that_write_guillemet_names_are_in_the_cone(
    servers: list[Server], project: Path
) -> None:
    """`import «Demo».«Basic»` is `import Demo.Basic`, as Lean reads it; on one line with
    another import, and spelled with a space-free escape of a plain name."""
    (project / "Demo" / "Use.lean").write_text(
        USE.replace("import Demo.Basic", "import «Demo».«Basic»")
    )
    (project / "Main.lean").write_text(
        MAIN.replace("import Demo.Use", "import «Demo».Use «Demo».«Other»")
    )
    server = lake_server(servers)
    result = verify(server, project, 1)
    assert result["ok"] is True and result["complete"] is True, result
    assert [m["module"] for m in result["modules"]] == ["Demo.Basic", "Demo.Use", "Main"]
    assert sorted(result["sources"]) == ["Demo.Basic", "Demo.Use", "Main"]
