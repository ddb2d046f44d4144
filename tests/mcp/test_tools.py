"""The tool registry: generated schema file, order, annotations, validation, identity tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from beam_mcp.tools import generate
from beam_mcp.tools.catalog import NAMES
from tests.mcp.helpers import REPO, SLEEP_BACKEND, Server, call, minimal_env, modern, structured

EXPECTED_ORDER = [
    "beam_version",
    "beam_stats",
    "beam_feedback_report",
    "lean_drop_workspace",
    "lean_run_at",
    "lean_run_at_handle",
    "lean_hover",
    "lean_signature_help",
    "lean_definition",
    "lean_references",
    "lean_document_symbols",
    "lean_workspace_symbols",
    "lean_goals",
    "lean_todo",
    "lean_code_action_resolve",
    "lean_run_with",
    "lean_run_with_linear",
    "lean_release",
    "lean_update",
    "lean_sync",
    "lean_refresh",
    "lean_save",
    "lean_close_save",
    "lean_close",
    "lean_verify",
    "lean_search",
    "lean_try",
]
READ_ONLY = {
    "beam_version",
    "beam_stats",
    "lean_run_at",
    "lean_hover",
    "lean_signature_help",
    "lean_definition",
    "lean_references",
    "lean_document_symbols",
    "lean_workspace_symbols",
    "lean_goals",
    "lean_todo",
    "lean_code_action_resolve",
    "lean_search",
}
ADDITIVE = {"lean_run_at_handle", "lean_run_with", "lean_try"}
IDEMPOTENT = {"lean_drop_workspace", "lean_close"}
SPECULATIVE = {
    "lean_run_at",
    "lean_run_at_handle",
    "lean_run_with",
    "lean_run_with_linear",
    "lean_try",
}


def test_committed_schema_matches_the_models() -> None:
    committed = generate.SCHEMA_PATH.read_text(encoding="utf-8")
    assert committed == generate.render(), "run: python -m beam_mcp.tools.generate"


def test_each_workspace_handler_is_typed_with_its_catalog_model() -> None:
    """Through these annotations mypy checks each input model against the argument protocols
    of the broker operation it reaches (``beam_runtime/broker/arguments.py``)."""
    from beam_mcp.tools.catalog import TOOLS

    wrong = [
        (spec.name, spec.model, spec.handler.__annotations__.get("args"))
        for spec in TOOLS
        if not spec.process and spec.handler.__annotations__.get("args") != f"m.{spec.model}"
    ]
    assert wrong == []


def listed(server: Server) -> list[dict]:
    tools: list[dict] = server.ask(modern(1, "tools/list"))["result"]["tools"]
    return tools


def walk(node: object) -> list[dict]:
    found: list[dict] = []
    if isinstance(node, dict):
        found.append(node)
        for key, value in node.items():
            if key == "properties":
                for sub in value.values():
                    found += walk(sub)
            else:
                found += walk(value)
    elif isinstance(node, list):
        for item in node:
            found += walk(item)
    return found


def test_tools_list_order_annotations_and_schemas(server: Server) -> None:
    tools = listed(server)
    assert [t["name"] for t in tools] == EXPECTED_ORDER == list(NAMES)
    for tool in tools:
        name = tool["name"]
        expected = (
            {"readOnlyHint": True}
            if name in READ_ONLY
            else {"destructiveHint": False}
            if name in ADDITIVE
            else {"idempotentHint": True}
            if name in IDEMPOTENT
            else None
        )
        assert tool.get("annotations") == expected, name
        assert "outputSchema" not in tool
        schema = tool["inputSchema"]
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        for node in walk(schema):
            assert "title" not in node and "$ref" not in node and "$defs" not in node
            if node.get("type") == "object" and "properties" in node:
                assert node.get("additionalProperties") is False, (name, node)
        props = schema["properties"]
        if name.startswith("lean_") or name == "beam_feedback_report":
            assert "workspace" in schema["required"], name
        else:
            assert props == {}, name
        if name in SPECULATIVE:
            assert "not a sandbox" in tool["description"], name
        for field in ("line", "character"):
            if field in props:
                assert props[field]["minimum"] == 0
        if "version" in props:
            assert props["version"]["minimum"] == 1
    assert "title" in tools[2]["inputSchema"]["properties"]  # a real field named title


def test_strict_validation_is_invalid_input(server: Server, project: Path) -> None:
    ws = {"root": str(project)}
    base = {"workspace": ws, "path": "Main.lean", "version": 1, "line": 0, "character": 0}
    cases = [
        {**base, "version": "3"},
        {**base, "line": True},
        {**base, "line": -1},
        {**base, "version": 0},
        {**base, "extra": 1},
        {**base, "wait_ms": -1},
        {**base, "line1": 0},
    ]
    for rid, arguments in enumerate(cases):
        body = structured(server.ask(call(rid, "lean_hover", arguments)))
        assert body["code"] == "invalidInput", arguments
        assert body["data"]["errors"]
    bad_goal = structured(server.ask(call(20, "lean_goals", {**base, "mode": "during"})))
    assert bad_goal["code"] == "invalidInput"
    version_args = structured(server.ask(call(21, "beam_version", {"x": 1})))
    assert version_args["code"] == "invalidInput"


def test_without_a_way_to_start_lean_calls_answer_runtime_setup(
    server: Server, project: Path
) -> None:
    # No --beam-cli and no --lean-cmd: whichever backend is present cannot start Lean.
    msg = server.ask(
        call(1, "lean_sync", {"workspace": {"root": str(project)}, "path": "Main.lean"})
    )
    result = msg["result"]
    assert result["isError"] is True
    body = result["structuredContent"]
    assert body["code"] == "runtimeSetup"
    assert set(body["data"]) >= {"category", "fix", "detail"}
    assert json.loads(result["content"][0]["text"]) == body


def test_symlinked_roots_are_canonicalized(project: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(project)
    srv = Server(env=minimal_env(**SLEEP_BACKEND))
    try:
        body = structured(
            srv.ask(
                call(1, "lean_update", {"workspace": {"root": str(alias)}, "path": "Main.lean"})
            )
        )
        assert body["workspace"] == {"root": os.path.realpath(project)}
    finally:
        srv.kill()


def test_a_root_that_is_no_lean_project_is_refused(project: Path, tmp_path: Path) -> None:
    """A directory without a project marker (lean-toolchain, lakefile) is no workspace: the
    call is refused before anything runs, and a project still works."""
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "Main.lean").write_text("def a := 1\n")
    srv = Server(env=minimal_env(**SLEEP_BACKEND))
    try:
        args = {"workspace": {"root": str(plain)}, "path": "Main.lean"}
        body = structured(srv.ask(call(1, "lean_update", args)))
        assert body["code"] == "invalidInput", body
        assert body["data"]["reason"] == "notLeanProject", body
        assert body["data"]["root"] == str(plain) and "lean-toolchain" in body["data"]["fix"]
        args = {"workspace": {"root": str(project)}, "path": "Main.lean"}
        assert structured(srv.ask(call(2, "lean_update", args)))["workspace"] == {
            "root": os.path.realpath(project)
        }
    finally:
        srv.kill()


def test_drop_accepts_a_vanished_root(server: Server, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    body = structured(
        server.ask(call(1, "lean_drop_workspace", {"workspace": {"root": str(gone)}}))
    )
    assert body == {
        "workspace": {"root": str(gone)},
        "dropped": False,
        "invalidated_handles": 0,
        "reason": "notFound",
    }
    rel = structured(server.ask(call(2, "lean_drop_workspace", {"workspace": {"root": "x"}})))
    assert rel["code"] == "invalidInput"


def test_beam_version_and_stats(server: Server) -> None:
    ident = structured(server.ask(call(1, "beam_version")))
    assert ident["name"] == "lean-beam-mcp" and ident["mcp_protocol"] == "2026-07-28"
    assert ident["runtime_active"] is False
    assert "runtime_current" not in ident and "runtime_id" not in ident  # development
    stats = structured(server.ask(call(2, "beam_stats")))
    assert set(stats) == {"uptime_ms", "tools", "workspaces"}
    entry = stats["tools"]["beam_version"]
    assert set(entry) == {"count", "errors", "cancelled", "p50_ms", "max_ms", "last_ms"}
    assert entry["count"] == 1 and stats["workspaces"] == []


def test_start_path_imports_nothing_heavy() -> None:
    code = (
        "import sys, beam_mcp.main, beam_mcp.server, beam_mcp.router;"
        "heavy = {'pydantic', 'anyio', 'lsprotocol', 'click', 'asyncio'} & set(sys.modules);"
        "print(sorted(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=minimal_env(),
        cwd=str(REPO),
        check=True,
    ).stdout
    assert out.strip() == "[]"


def test_stats_per_workspace_with_test_backend(project: Path) -> None:
    srv = Server(env=minimal_env(**SLEEP_BACKEND))
    try:
        ws = {"root": str(project)}
        srv.ask(call(1, "lean_sync", {"workspace": ws, "path": "Main.lean"}))
        stats = structured(srv.ask(call(2, "beam_stats")))
        (entry,) = stats["workspaces"]
        assert entry["root"] == os.path.realpath(project)
        assert entry["tools"]["lean_sync"]["count"] == 1
        assert set(entry["session"]) >= {
            "active",
            "epoch",
            "pid",
            "rss_bytes",
            "open_documents",
            "scratch_documents",
        }
        assert structured(srv.ask(call(3, "beam_version")))["runtime_active"] is True
        dropped = structured(srv.ask(call(4, "lean_drop_workspace", {"workspace": ws})))
        assert dropped["dropped"] is True
        assert structured(srv.ask(call(5, "beam_stats")))["workspaces"] == []
    finally:
        srv.kill()
