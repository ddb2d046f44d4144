"""Raw-wire tests: every row of the JSON-RPC error table of docs/MCP.md and the wire corners."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp.helpers import Server, call, error_code, meta, modern, request, structured

M = meta()


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"{not json\n", -32700),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":NaN}\n', -32700),
        (b"\xff\xfe\n", -32700),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n', -32600),
        (b'"just a string"\n', -32600),
        (b'{"jsonrpc":"2.0","id":1,"result":{}}\n', -32600),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n', -32600),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}\n', -32600),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n', -32600),
    ],
)
def test_unattributable_lines_answer_with_null_id(server: Server, line: bytes, code: int) -> None:
    server.send(line)
    msg = server.read()
    assert msg["id"] is None
    assert error_code(msg) == code


@pytest.mark.parametrize(
    "envelope",
    [
        {"jsonrpc": "2.0", "id": 7, "method": "ping", "extra": 1},
        {"jsonrpc": "1.0", "id": 7, "method": "ping"},
        {"id": 7, "method": "ping"},
        {"jsonrpc": "2.0", "id": 7, "method": 5},
    ],
)
def test_bad_envelope_keeps_the_recovered_id(server: Server, envelope: dict) -> None:
    msg = server.ask(envelope)
    assert msg["id"] == 7 and error_code(msg) == -32600


def test_blank_lines_are_ignored_and_crlf_accepted(server: Server) -> None:
    server.send(b"\n   \n\r\n")
    server.send(b'{"jsonrpc":"2.0","id":"a","method":"ping"}\r\n')
    msg = server.read()
    assert msg == {"jsonrpc": "2.0", "id": "a", "result": {}}


def test_string_and_integer_ids_are_distinct(server: Server) -> None:
    server.send(request("1", "ping"), request(1, "ping"))
    first, second = server.read(), server.read()
    assert [first["id"], second["id"]] == ["1", 1]


def test_overlong_line_is_discarded_with_parse_error(server: Server) -> None:
    server.send(b"x" * (32 * 1024 * 1024 + 10) + b"\n")
    msg = server.read()
    assert msg["id"] is None and error_code(msg) == -32700
    assert server.ask(request(2, "ping"))["result"] == {}


def test_unknown_method(server: Server) -> None:
    assert error_code(server.ask(modern(1, "resources/list"))) == -32601
    assert error_code(server.ask(request(2, "no/such"))) == -32601


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel"])
def test_modern_legacy_methods_are_not_found(server: Server, method: str) -> None:
    assert error_code(server.ask(modern(1, method, {"level": "info"}))) == -32601


def test_unknown_tool_and_mrtr_fields_and_bad_arguments(server: Server) -> None:
    assert error_code(server.ask(call(1, "lean_nothing"))) == -32602
    for field in ("inputResponses", "requestState"):
        msg = modern(2, "tools/call", {"name": "beam_version", "arguments": {}, field: {}})
        err = server.ask(msg)
        assert error_code(err) == -32602 and "input_required" in err["error"]["message"]
    bad_args = modern(3, "tools/call", {"name": "beam_version", "arguments": [1]})
    assert error_code(server.ask(bad_args)) == -32602
    extra = modern(4, "tools/call", {"name": "beam_version", "arguments": {}, "other": 1})
    assert error_code(server.ask(extra)) == -32602


@pytest.mark.parametrize("token", [1.5, True, None, {"a": 1}, [1]])
def test_bad_progress_token(server: Server, token: object) -> None:
    msg = call(1, "beam_version", call_meta={"progressToken": token})
    assert error_code(server.ask(msg)) == -32602


@pytest.mark.parametrize(
    "bad_meta",
    [
        {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
        {"io.modelcontextprotocol/clientCapabilities": {}},
        {**M, "io.modelcontextprotocol/protocolVersion": 2026},
        {**M, "io.modelcontextprotocol/clientCapabilities": []},
        {**M, "io.modelcontextprotocol/clientInfo": {"name": "x"}},
        {**M, "io.modelcontextprotocol/logLevel": "loud"},
        {"io.modelcontextprotocol/logLevel": "debug"},
    ],
)
def test_missing_or_malformed_modern_metadata(server: Server, bad_meta: dict) -> None:
    msg = server.ask(request(1, "tools/list", {"_meta": bad_meta}))
    assert error_code(msg) == -32602


def test_unsupported_modern_version(server: Server) -> None:
    bad = {**M, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    msg = server.ask(request(1, "server/discover", {"_meta": bad}))
    assert error_code(msg) == -32022
    assert msg["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2099-01-01"}


def test_tools_list_cursor_is_rejected(server: Server) -> None:
    assert error_code(server.ask(modern(1, "tools/list", {"cursor": "next"}))) == -32602


def test_notifications_need_no_meta_and_get_no_answer(server: Server) -> None:
    server.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
        {"jsonrpc": "2.0", "method": "notifications/whatever"},
    )
    assert server.ask(request(1, "ping"))["id"] == 1
    assert server.quiet(0.2) == []


def test_tool_errors_are_results(server: Server, project: Path, tmp_path: Path) -> None:
    cases = {
        "relative": {"root": "proj"},
        "missing": {"root": str(tmp_path / "nope")},
        "file": {"root": str(project / "Main.lean")},
        "not a project": {"root": str(tmp_path)},
        "alias field": {"root": str(project), "id": "x"},
    }
    for rid, (_, ws) in enumerate(cases.items()):
        msg = server.ask(call(rid, "lean_sync", {"workspace": ws, "path": "Main.lean"}))
        body = structured(msg)
        assert msg["result"]["isError"] is True
        assert body["code"] == "invalidInput", body
    missing_ws = server.ask(call(50, "lean_hover", {"path": "Main.lean"}))
    assert structured(missing_ws)["code"] == "invalidInput"


def test_eof_teardown_is_clean(server: Server) -> None:
    server.ask(request(1, "ping"))
    code, stderr, rest = server.close()
    assert (code, stderr, rest) == (0, b"", [])
