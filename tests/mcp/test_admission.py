"""Tool arguments admitted from the schema (`beam_mcp.tools.admit`) against the pydantic models.

The corpus is derived from each tool's schema: one complete valid input, then for every field
its removal, `null`, values of the wrong type, values just past each bound and an unknown key
next to it. Three checks: the schema path and pydantic agree on it (the schema may refuse only
an explicit `null` that the model allows, and then the model admits it); a real server answers
every rejected input byte for byte as the pydantic path words it; and the input a backend is
handed for an admitted one has the same fields and values as the pydantic model.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from beam_mcp import router as router_module
from beam_mcp.errors import ToolError
from beam_mcp.router import Router
from beam_mcp.settings import Settings
from beam_mcp.tools import admit
from beam_mcp.tools.catalog import TOOLS
from beam_mcp.tools.models import INPUT_MODELS
from tests.mcp.helpers import REPO, SLEEP_BACKEND, Server, call, minimal_env
from tests.mcp.sleep_backend import echo

ROOT = "/"  # a placeholder: replaced by a project root where a call must get past the root
LISTED = json.loads((REPO / "beam_mcp" / "schema.json").read_text())["tools"]
SCHEMAS = {tool["name"]: tool["inputSchema"] for tool in LISTED}
WRONG = [None, "1", 1, 1.0, True, [], {}]


def valid(schema: dict[str, Any], name: str = "") -> Any:
    """A value every schema keyword accepts, with every optional property given."""
    if "enum" in schema:
        return schema["enum"][-1]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties")
        if props is None:
            return {"any": [1, "two"]}
        return {key: valid(sub, key) for key, sub in props.items()}
    if kind == "array":
        item = valid(schema.get("items", {}), name)
        return [item] * max(1, schema.get("minItems", 1))
    if kind == "integer":
        return schema.get("minimum", 0) + (1 if "maximum" in schema else 7)
    if kind == "boolean":
        return True
    if kind == "string":
        return ROOT if name == "root" else f"{name}-text"
    return {"anything": [1, None]}


def variants(schema: dict[str, Any], value: Any) -> list[Any]:
    """`value`, and values near it that break one keyword of `schema` (or may not)."""
    out = [value, *WRONG]
    if "minimum" in schema:
        out += [schema["minimum"] - 1, schema["minimum"], 10**30]
    if "maximum" in schema:
        out += [schema["maximum"], schema["maximum"] + 1]
    if "enum" in schema:
        out += ["nope", schema["enum"][0].upper()]
    if "maxLength" in schema:  # characters, not UTF-8 or UTF-16 units: both sides agree
        most = schema["maxLength"]
        out += ["x" * most, "x" * (most + 1), "𝔸" * most, "𝔸" * (most + 1)]
    if schema.get("type") == "array":
        item = value[0]
        out += [[], [item] * (schema.get("maxItems", 3) + 1), [1], [item, None]]
        for sub in variants(schema.get("items", {}), item)[1:]:
            out.append([sub])
    if schema.get("type") == "object" and "properties" in schema:
        out.append({**value, "bogus": 1})
        for key, sub in schema["properties"].items():
            out.append({k: v for k, v in value.items() if k != key})
            given = value[key] if key in value else valid(sub, key)
            out += [{**value, key: bad} for bad in variants(sub, given)]
    return out


def corpus(tool: str) -> list[dict[str, Any]]:
    schema = SCHEMAS[tool]
    full = valid(schema)
    required = {k: v for k, v in full.items() if k in schema.get("required", [])}
    cases = [full, required, {}, {"bogus": 1}]
    cases += [v for v in variants(schema, full) if isinstance(v, dict)]
    cases += [v for v in variants(schema, required) if isinstance(v, dict)]
    return cases


def pydantic_result(tool: str, args: dict[str, Any]) -> Any:
    try:
        return INPUT_MODELS[tool].model_validate(args)
    except ValueError:  # pydantic's ValidationError
        return None


def has_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, dict):
        return any(has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(has_null(v) for v in value)
    return False


TOOL_NAMES = [spec.name for spec in TOOLS]


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_schema_path_agrees_with_pydantic(tool: str) -> None:
    outcomes = set()
    for args in corpus(tool):
        model = pydantic_result(tool, args)
        fast = admit.admit(tool, args)
        outcomes.add(model is not None)
        if fast is not None:
            assert model is not None, f"the schema admitted what pydantic rejects: {args}"
            assert echo(fast) == echo(model), args
            assert fast.model_fields_set == model.model_fields_set
        elif model is not None:
            assert has_null(args), f"the schema refused what pydantic admits: {args}"
    assert outcomes == {True, False} or tool in ("beam_version", "beam_stats")


def test_admitted_inputs_are_read_only_and_copy_like_models() -> None:
    args = {"workspace": {"root": ROOT}, "path": "A.lean"}
    fast = admit.admit("lean_sync", args)
    assert fast is not None
    with pytest.raises(AttributeError):
        fast.path = "B.lean"  # type: ignore[misc]
    copy = fast.model_copy(update={"wait_ms": 5})
    model = INPUT_MODELS["lean_sync"].model_validate(args).model_copy(update={"wait_ms": 5})
    assert echo(copy) == echo(model) and fast.wait_ms is None


def expected_lines(tool: str, cases: list[tuple[int, dict[str, Any]]]) -> list[bytes]:
    """Answer lines of the pydantic path (today's), from a router of this process."""
    sent: list[bytes] = []

    class Host:
        def send(self, data: bytes, done: Any = None) -> None:
            sent.append(data)

    router = Router(Settings(), Host())  # type: ignore[arg-type]
    for rid, args in cases:
        try:
            router_module.model_arguments(tool, args)
        except ToolError as error:
            router.finish_call(rid, tool, None, time.monotonic(), True, error=error)
        else:
            raise AssertionError(f"pydantic admitted {args}")
    return sent


def test_rejected_inputs_answer_exactly_as_pydantic_words_them() -> None:
    server = Server(env=minimal_env(**SLEEP_BACKEND))
    try:
        rid = 0
        for tool in TOOL_NAMES:
            cases = []
            for args in corpus(tool):
                if pydantic_result(tool, args) is None:
                    rid += 1
                    cases.append((rid, args))
            for case_id, args in cases:
                server.send(call(case_id, tool, args))
            got = [server.lines.get(timeout=20) for _ in cases]
            assert got == expected_lines(tool, cases), tool
    finally:
        server.close()


def rooted(args: dict[str, Any], root: Path) -> dict[str, Any]:
    workspace = args.get("workspace")
    if isinstance(workspace, dict) and workspace.get("root") == ROOT:
        return {**args, "workspace": {**workspace, "root": str(root)}}
    return args


def test_backend_gets_the_fields_pydantic_would_build(tmp_path: Path) -> None:
    (tmp_path / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    env = {**SLEEP_BACKEND, "SLEEP_BACKEND_ECHO": "1"}
    server = Server(env=minimal_env(**env))
    try:
        rid = 0
        for spec in TOOLS:
            if spec.process:
                continue
            for raw in corpus(spec.name):
                args = rooted(raw, tmp_path)
                model = pydantic_result(spec.name, args)
                if model is None or model.workspace.root != str(tmp_path):
                    continue  # invalid, or valid arguments naming a root that is no project
                rid += 1
                reply = server.ask(call(rid, spec.name, args))
                body = reply["result"]["structuredContent"]
                assert "arguments" in body, reply
                assert body["arguments"] == json.loads(json.dumps(echo(model))), args
                fast = admit.admit(spec.name, args) is not None
                assert body["arguments_type"] == ("Arguments" if fast else type(model).__name__)
    finally:
        server.close()


def _loaded(pid: int, pattern: str) -> bool:
    maps = Path(f"/proc/{pid}/maps").read_text()
    return re.search(pattern, maps) is not None


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads /proc/<pid>/maps")
def test_pydantic_loads_only_for_inputs_the_schema_refuses(tmp_path: Path) -> None:
    (tmp_path / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    server = Server(env=minimal_env(**SLEEP_BACKEND))
    try:
        args = {"workspace": {"root": str(tmp_path)}, "path": "A.lean"}
        assert server.ask(call(1, "lean_sync", args))["result"]["isError"] is False
        assert not _loaded(server.proc.pid, r"pydantic_core"), "pydantic loaded for valid input"
        bad = server.ask(call(2, "lean_sync", {**args, "wait_ms": -1}))
        assert bad["result"]["structuredContent"]["code"] == "invalidInput"
        assert _loaded(server.proc.pid, r"pydantic_core")
    finally:
        server.close()


PLUGIN = """\
import os
open(os.environ["PLUGIN_MARK"], "w").close()
plugin = object()
"""


def test_pydantic_plugins_are_not_discovered(tmp_path: Path) -> None:
    """A pydantic plugin installed next to the server is never even imported."""
    site = tmp_path / "site"
    dist = site / "beam_probe_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: beam-probe-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pydantic]\nprobe = beam_probe_plugin:plugin\n")
    (site / "beam_probe_plugin.py").write_text(PLUGIN)
    mark = tmp_path / "plugin-imported"
    env = minimal_env(**SLEEP_BACKEND, PLUGIN_MARK=str(mark))
    env["PYTHONPATH"] = f"{REPO}{os.pathsep}{site}"
    server = Server(env=env)
    try:
        bad = {"workspace": {"root": str(tmp_path)}, "path": 1}
        reply = server.ask(call(1, "lean_sync", bad))
        assert reply["result"]["structuredContent"]["code"] == "invalidInput"
    finally:
        server.close()
    assert not mark.exists(), "pydantic discovered and loaded a plugin"


def test_committed_fields_are_generated_from_the_models() -> None:
    from beam_mcp.tools import generate

    committed = generate.FIELDS_PATH.read_text(encoding="utf-8")
    assert committed == generate.render_fields(), "run: python -m beam_mcp.tools.generate"
