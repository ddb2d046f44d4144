"""Legacy `initialize` and modern `clientInfo` are validated before anything changes (seed 000)."""

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
