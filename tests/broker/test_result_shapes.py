"""Every tool's real answer has exactly its shape of record.

The shape of record of a tool's result is its handler's declared return type, a TypedDict of
`beam_runtime.broker.results`. These tests drive every workspace tool through the real server
against the fake Lean (and the fake `lake serve` for save and verify) and check each
`structuredContent` key by key: no undeclared key, no missing required key, every value of its
declared type.
"""

from __future__ import annotations

import shlex
import typing
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import is_typeddict

from beam_mcp.tools import handlers
from beam_mcp.tools.catalog import TOOLS
from beam_runtime.broker import results
from tests.broker.conftest import start
from tests.broker.fake import FAST_FAKE, fake_server, ok, workspace
from tests.mcp.helpers import REPO, Server
from tests.support.shapes import problems

LAKE_SERVE = shlex.join([str(REPO / "tests" / "fake_lean" / "bin" / "lake"), "serve"])
PROOF = (
    "def answerA : Nat := 42\n"
    "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
    "  constructor\n"
    "  exact hp\n"
    "  exact hq\n"
    "theorem foo : 1 + 1 = 2 := by sorry\n"
)


def shape_of(tool: str) -> Any:
    annotation = getattr(handlers, tool).__annotations__["return"]  # e.g. "r.SyncResult"
    return eval(annotation, {"r": results})


def check(tool: str, value: dict[str, Any]) -> None:
    found = problems(value, shape_of(tool))
    assert found == [], f"{tool}: {found}"


def test_every_workspace_tool_declares_a_shape_of_record() -> None:
    for spec in TOOLS:
        if not spec.process:
            assert typing.get_origin(shape_of(spec.name)) is None
            assert is_typeddict(shape_of(spec.name)), spec.name


def test_the_checker_rejects_wrong_shapes() -> None:
    good = {"workspace": {"root": "/r"}, "dropped": True, "invalidated_handles": 0}
    assert problems(good, results.DropResult) == []
    assert problems({**good, "extra": 1}, results.DropResult)
    assert problems({**good, "dropped": 1}, results.DropResult)
    assert problems({"workspace": {"root": "/r"}, "dropped": True}, results.DropResult)
    assert problems({**good, "reason": "other"}, results.DropResult)


def test_document_tools_answer_their_shapes(servers: list[Server], project: Path) -> None:
    (project / "Main.lean").write_text(PROOF)
    server = fake_server(servers)
    ws = workspace(project)
    ids = iter(range(1, 100))

    def run(tool: str, **args: Any) -> dict[str, Any]:
        value = ok(server, next(ids), tool, {**ws, **args})
        check(tool, value)
        return value

    at = {"path": "Main.lean", "line": 0, "character": 4}
    run("lean_update", path="Main.lean")
    run("lean_sync", path="Main.lean", diagnostics_in_result=True, diagnostic_scope="all")
    run("lean_sync", path="Main.lean", wait_ms=0)
    run("lean_refresh", path="Main.lean")
    for tool in ("lean_hover", "lean_signature_help", "lean_definition", "lean_references"):
        run(tool, **at)
    run("lean_document_symbols", path="Main.lean")
    run("lean_workspace_symbols", query="answer")
    run("lean_goals", path="Main.lean", line=3, character=2, mode="before")
    run("lean_goals", path="Main.lean", line=3, character=2, mode="after")
    run("lean_todo", path="Main.lean")
    step = {"path": "Main.lean", "line": 3, "character": 2, "text": "exact hp"}
    run("lean_run_at", **step)
    assert run("lean_run_at", **{**step, "text": "sorry"})["reason"] == "usesSorry"
    handle = run("lean_run_at_handle", **step)["next_handle"]
    assert handle is not None
    more = run("lean_run_with", path="Main.lean", handle=handle, text="exact hq")
    run("lean_release", path="Main.lean", handle=handle)
    run("lean_run_with_linear", path="Main.lean", handle=more["next_handle"], text="skip")
    tried = run(
        "lean_try",
        path="Main.lean",
        positions=[{"line": 3, "character": 2}, {"line1": 4, "match": "exact hp"}],
        tactics=["exact hp", "exact hq", "exact hp"],
        suggest=True,
    )
    # line1 4 + match "exact hp" names the same spot as line 3, character 2
    assert [entry["position"] for entry in tried["positions"]] == [{"line": 3, "character": 2}] * 2
    assert tried["positions"][0]["failed"] and tried["positions"][0]["succeeded"]
    run("lean_search", query="answer")
    run(
        "beam_feedback_report",
        title="t",
        summary="s",
        reproduction="r",
        expected="e",
        actual="a",
        include_collected=True,
    )
    run("lean_close", path="Main.lean")
    run("lean_drop_workspace")
    run("lean_drop_workspace")


@pytest.fixture
def lake_project(tmp_path: Path) -> Path:
    root = tmp_path / "lakeproj"
    root.mkdir()
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "lakefile.toml").write_text('name = "demo"\n')
    (root / "lake-manifest.json").write_text('{"version": 7, "packages": []}\n')
    (root / "Main.lean").write_text("theorem fine : True := trivial\n")
    return root.resolve()


def test_lake_tools_answer_their_shapes(servers: list[Server], lake_project: Path) -> None:
    home = lake_project.parent / "home"  # lean_verify's receipt key goes to this HOME
    home.mkdir()
    server = start(servers, "--lean-cmd", LAKE_SERVE, **FAST_FAKE, HOME=str(home))
    ws = workspace(lake_project)
    saved = ok(server, 1, "lean_save", {**ws, "path": "Main.lean"})
    check("lean_save", saved)
    check("lean_close_save", ok(server, 2, "lean_close_save", {**ws, "path": "Main.lean"}))
    verified = ok(server, 3, "lean_verify", {**ws, "path": "Main.lean"})
    check("lean_verify", verified)
    again = ok(
        server, 4, "lean_verify", {**ws, "path": "Main.lean", "receipt": verified["receipt"]}
    )
    check("lean_verify", again)
    assert again["receipt_valid"] is True
