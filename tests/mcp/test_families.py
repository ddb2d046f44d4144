"""Protocol-family selection, the legacy lifecycle and modern result envelopes."""

from __future__ import annotations

from beam_mcp.tools.catalog import NAMES
from tests.mcp.helpers import LEGACY, MODERN, Server, call, error_code, modern, request

SERVER_INFO = "io.modelcontextprotocol/serverInfo"
INIT = {
    "protocolVersion": "2024-11-05",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


def initialized() -> dict:
    return {"jsonrpc": "2.0", "method": "notifications/initialized"}


def test_discover_is_neutral_then_legacy(server: Server) -> None:
    found = server.ask(modern(1, "server/discover"))["result"]
    assert found["supportedVersions"] == [MODERN]
    assert found["capabilities"] == {"logging": {}, "tools": {"listChanged": False}}
    assert (
        found["resultType"] == "complete" and found["_meta"][SERVER_INFO]["name"] == "lean-beam-mcp"
    )
    assert (found["ttlMs"], found["cacheScope"]) == (3600000, "public")
    assert "workspace" in found["instructions"]
    assert "progressToken" in found["instructions"]  # said once here, not per tool
    init = server.ask(request(2, "initialize", INIT))["result"]
    assert init["protocolVersion"] == INIT["protocolVersion"]  # a revision it serves
    assert "resultType" not in init and "ttlMs" not in init
    server.send(initialized())
    listed = server.ask(request(3, "tools/list"))["result"]
    assert len(listed["tools"]) == len(NAMES) and "ttlMs" not in listed and "_meta" not in listed
    # Legacy selected: modern traffic, including discovery, is cross-family.
    assert error_code(server.ask(modern(4, "server/discover"))) == -32600
    assert error_code(server.ask(modern(5, "tools/list"))) == -32600


def test_discover_is_neutral_then_modern(server: Server) -> None:
    server.ask(modern(1, "server/discover"))
    listed = server.ask(modern(2, "tools/list"))["result"]
    assert listed["resultType"] == "complete" and listed["cacheScope"] == "public"
    assert listed["_meta"][SERVER_INFO]["version"]
    # Modern selected: bare requests lack metadata, legacy-only methods are cross-family.
    assert error_code(server.ask(request(3, "tools/list"))) == -32602
    assert error_code(server.ask(request(4, "initialize", INIT))) == -32600
    assert error_code(server.ask(request(5, "ping"))) == -32600
    # Discovery still works and metadata is never retained between requests.
    assert server.ask(modern(6, "server/discover"))["result"]["resultType"] == "complete"
    result = server.ask(call(7, "beam_version"))["result"]
    assert result["resultType"] == "complete" and "ttlMs" not in result


def test_modern_tool_call_selects_modern(server: Server) -> None:
    assert server.ask(call(1, "beam_stats"))["result"]["isError"] is False
    assert error_code(server.ask(request(2, "initialize", INIT))) == -32600


def test_invalid_modern_request_does_not_select(server: Server) -> None:
    bad = modern(1, "tools/list", None, {"io.modelcontextprotocol/protocolVersion": "1999-01-01"})
    assert error_code(server.ask(bad)) == -32022
    init = server.ask(request(2, "initialize", {**INIT, "protocolVersion": "1999-01-01"}))
    assert init["result"]["protocolVersion"] == LEGACY


def test_legacy_lifecycle_order(server: Server) -> None:
    assert error_code(server.ask(request(1, "tools/list"))) == -32600
    assert server.ask(request(2, "ping"))["result"] == {}
    assert error_code(server.ask(request(3, "initialize", {"protocolVersion": "x"}))) == -32602
    server.ask(request(4, "initialize", INIT))
    assert error_code(server.ask(request(5, "tools/list"))) == -32600
    assert error_code(server.ask(request(6, "initialize", INIT))) == -32600
    server.send(initialized())
    assert len(server.ask(request(7, "tools/list"))["result"]["tools"]) == len(NAMES)
    assert server.ask(request(8, "logging/setLevel", {"level": "warning"}))["result"] == {}
    assert error_code(server.ask(request(9, "logging/setLevel", {"level": "loud"}))) == -32602
    assert server.ask(request(10, "ping"))["result"] == {}


def test_ids_may_be_reused_after_completion(server: Server) -> None:
    server.ask(modern(1, "tools/list"))
    assert server.ask(call(1, "beam_version"))["result"]["isError"] is False
    assert server.ask(call(1, "beam_version"))["result"]["isError"] is False
