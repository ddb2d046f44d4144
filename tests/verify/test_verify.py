"""``lean_verify`` through a real server on the fake ``lake serve``: the batch build of the reverse
dependency cone, axioms from the built modules, flags, and receipts that hold until a cone
source changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.broker.fake import err, fake_processes, fake_server, ok, workspace
from tests.mcp.helpers import Server, call
from tests.verify.support import (
    BASIC,
    LAKE_SERVE,
    MAIN,
    OTHER,
    USE,
    by_module,
    by_name,
    home_of,
    make_project,
    verify,
)
from tests.verify.support import lake_server as lake_server_in

__all__ = ["LAKE_SERVE"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def lake_server(servers: list[Server], project: Path, **env: str) -> Server:
    return lake_server_in(servers, home_of(project), **env)


def test_a_clean_cone_verifies_with_axioms_and_a_receipt(
    servers: list[Server], project: Path
) -> None:
    server = lake_server(servers, project)
    result = verify(server, project, 1)
    assert result["ok"] is True and result["complete"] is True, result
    assert [m["module"] for m in result["modules"]] == ["Demo.Basic", "Demo.Use", "Main"]
    assert all(m["built"] and m["errors"] == [] for m in result["modules"])
    assert by_module(result)["Demo.Use"]["path"] == "Demo/Use.lean"
    assert by_name(result) == {  # every constant Lean lists, private ones by their own name
        "Demo.a": {"name": "Demo.a", "axioms": [], "flags": []},
        "Demo.a_pos": {"name": "Demo.a_pos", "axioms": ["propext"], "flags": []},
        "Demo.plain": {"name": "Demo.plain", "axioms": [], "flags": []},
        "Demo.hidden": {"name": "Demo.hidden", "axioms": [], "flags": []},
    }
    assert result["flagged"] == [] and result["toolchain"] == "leanprover/lean4:v4.24.0"
    assert result["statements"] == [] and "reason" not in result
    assert result["policy"] == {
        "allowed_axioms": ["propext", "Classical.choice", "Quot.sound"],
        "forbid_sorry": True,
        "forbid_native": True,
        "forbid_implemented_by": True,
        "forbid_debug_options": True,
        "forbid_search_tactics": True,
    }
    assert len(result["manifest_hash"]) == 16
    assert sorted(result["sources"]) == ["Demo.Basic", "Demo.Use", "Main"]
    assert result["receipt"]["ok"] is True
    assert (project / ".lake" / "build" / "lib" / "lean" / "Main.olean").is_file()
    assert not (project / ".lake" / "build" / "lib" / "lean" / "Demo" / "Other.olean").exists()


def test_an_edit_that_breaks_a_downstream_module_is_not_ok_and_names_it(
    servers: list[Server], project: Path
) -> None:
    server = lake_server(servers, project)
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
    server = lake_server(servers, project)
    result = verify(server, project, 1)
    assert result["ok"] is False and all(m["built"] for m in result["modules"])
    names = by_name(result)
    assert names["Demo.bad"] == {
        "name": "Demo.bad",
        "axioms": ["Demo.myAx"],
        "flags": ["axiom:Demo.myAx"],
    }
    assert names["Demo.myAx"]["flags"] == ["axiom:Demo.myAx"]  # the axiom is a constant too
    assert names["Demo.todo"] == {"name": "Demo.todo", "axioms": ["sorryAx"], "flags": ["sorryAx"]}
    assert names["Demo.fast"]["flags"] == ["unsafe:Demo.fast"]
    assert names["Demo.slow"]["flags"] == ["implemented_by:Demo.slow"]
    assert names["Demo.unchecked"]["flags"] == ["option:debug.skipKernelTC"]
    assert sorted(result["flagged"]) == [
        "Demo.bad",
        "Demo.fast",
        "Demo.myAx",
        "Demo.slow",
        "Demo.todo",
        "Demo.unchecked",
    ]
    assert names["Demo.plain"]["flags"] == []
    named = verify(server, project, 2, declarations=["a_pos", "Demo.plain"])
    assert [d["name"] for d in named["declarations"]][:2] == ["Demo.a_pos", "Demo.plain"]
    assert all(d["flags"] == [] for d in named["declarations"][:2])
    # the module still holds a sorry and a debug option: named or not, that is not ok
    assert named["ok"] is False
    assert sorted(named["flagged"]) == ["Demo/Basic.lean:11", "Demo/Basic.lean:8"]
    assert by_name(named)["Demo/Basic.lean:8"]["flags"] == ["sorryWarning"]
    assert by_name(named)["Demo/Basic.lean:11"]["flags"] == ["option:debug.skipKernelTC"]
    partly = verify(server, project, 3, declarations=["Demo.plain", "nothing_here"])
    assert partly["ok"] is False and "nothing_here" in partly["flagged"]
    assert by_name(partly)["nothing_here"]["flags"] == ["notFound"]


def test_a_receipt_holds_until_a_cone_source_changes(servers: list[Server], project: Path) -> None:
    first = lake_server(servers, project)
    receipt = verify(first, project, 1)["receipt"]
    fresh = lake_server(servers, project)  # a new process: answering must not need Lean or Lake
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
    server = lake_server(servers, project)
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
    server = lake_server(servers, project)
    ws = workspace(project)
    both = err(server, 1, "lean_verify", {**ws, "path": "Main.lean", "paths": ["Main.lean"]})
    neither = err(server, 2, "lean_verify", ws)
    assert both["code"] == neither["code"] == "invalidInput" and both["data"]["fix"]
    (project / "notes.txt").write_text("hi\n")
    (project / ".hidden").mkdir()
    (project / ".hidden" / "X.lean").write_text("def x := 1\n")
    hidden = err(server, 5, "lean_verify", {**ws, "path": ".hidden/X.lean"})
    assert hidden["code"] == "invalidParams" and hidden["data"]["fix"]


def test_several_files_verify_together(servers: list[Server], project: Path) -> None:
    server = lake_server(servers, project)
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
    server = lake_server(servers, project, FAKE_LAKE_BUILD_MS="20000")
    result = verify(server, project, 1, wait_ms=1500)
    assert result["ok"] is False and result["complete"] is False
    assert result["receipt"] is None and result["retry_after_ms"] > 0
    assert not any(m["built"] for m in result["modules"])
    assert result["build"]["finished"] is False
    assert result["declarations"] == [{"name": "Demo.Basic", "axioms": None, "flags": ["notBuilt"]}]
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
    server = lake_server(servers, project)
    result = verify(server, project, 1)
    assert result["ok"] is True and result["complete"] is True, result
    # the importers of Demo.Basic, written with guillemets, are all built and covered (the
    # receipt also covers what they import, here Demo.Other)
    built = [m["module"] for m in result["modules"]]
    assert {"Demo.Basic", "Demo.Use", "Main"} <= set(built), built
    assert {"Demo.Basic", "Demo.Use", "Main"} <= set(result["sources"]), result["sources"]
