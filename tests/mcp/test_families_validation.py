"""Legacy `initialize` and modern `clientInfo` are validated before anything changes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.mcp.helpers import LEGACY, Server, call, error_code, request

INFO = "io.modelcontextprotocol/clientInfo"
INIT: dict[str, Any] = {
    "protocolVersion": LEGACY,
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


@pytest.mark.parametrize(
    "params",
    [
        {**INIT, "extra": True},
        {**INIT, "clientinfo": {}},
        {**INIT, "clientInfo": {"name": "t"}},
        {**INIT, "clientInfo": {"name": "t", "version": 1}},
        {**INIT, "clientInfo": {"version": "1"}},
        {**INIT, "clientInfo": "t 1"},
    ],
    ids=["undeclared", "misspelled", "no-version", "number-version", "no-name", "string"],
)
def test_bad_initialize_is_invalid_params_and_changes_nothing(
    server: Server, params: dict[str, Any]
) -> None:
    assert error_code(server.ask(request(1, "initialize", params))) == -32602
    # still fresh: a sound initialize is answered as the first one
    assert server.ask(request(2, "initialize", INIT))["result"]["protocolVersion"] == LEGACY


@pytest.mark.parametrize(
    "info",
    [{"name": "t"}, {"name": "t", "version": 1}, {"version": "1"}, "t", None],
    ids=["no-version", "number-version", "no-name", "string", "null"],
)
def test_modern_client_info_needs_a_string_version(server: Server, info: Any) -> None:
    bad = call(1, "beam_version")
    bad["params"]["_meta"][INFO] = info
    assert error_code(server.ask(bad)) == -32602
    good = server.ask(call(2, "beam_version"))
    assert good["result"]["isError"] is False


CAPS = "io.modelcontextprotocol/clientCapabilities"
LEVEL = "io.modelcontextprotocol/logLevel"


@pytest.mark.parametrize(
    "change",
    [{CAPS: None}, {CAPS: []}, {CAPS: "all"}, {LEVEL: "loud"}, {LEVEL: 3}],
    ids=["null-capabilities", "list-capabilities", "string-capabilities", "bad-level", "number"],
)
def test_modern_metadata_is_checked(server: Server, change: dict[str, Any]) -> None:
    bad = call(1, "beam_version")
    bad["params"]["_meta"].update(change)
    assert error_code(server.ask(bad)) == -32602
    missing = call(2, "beam_version")
    del missing["params"]["_meta"][CAPS]
    assert error_code(server.ask(missing)) == -32602
    assert server.ask(call(3, "beam_version"))["result"]["isError"] is False


def test_modern_methods_refuse_undeclared_params(server: Server) -> None:
    discover = request(1, "server/discover", {"_meta": call(0, "x")["params"]["_meta"], "x": 1})
    assert error_code(server.ask(discover)) == -32602
    listing = call(2, "beam_version")
    listing["method"] = "tools/list"
    listing["params"] = {"_meta": listing["params"]["_meta"], "filter": "lean"}
    assert error_code(server.ask(listing)) == -32602


def test_legacy_methods_refuse_undeclared_params(server: Server) -> None:
    server.ask(request(1, "initialize", INIT))
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert error_code(server.ask(request(2, "ping", {"extra": 1}))) == -32602
    assert error_code(server.ask(request(3, "tools/list", {"page": 2}))) == -32602
    level = request(4, "logging/setLevel", {"level": "info", "also": True})
    assert error_code(server.ask(level)) == -32602
    assert server.ask(request(5, "ping", {}))["result"] == {}
    assert "result" in server.ask(request(6, "logging/setLevel", {"level": "info"}))
