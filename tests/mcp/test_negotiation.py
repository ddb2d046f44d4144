"""Legacy revision negotiation: `initialize` is answered with the revision the client asked for
when the server can serve it, else with the newest one; what a revision lacks is left out."""

from __future__ import annotations

import json
from typing import Any

import pytest

from beam_mcp.tools.catalog import NAMES
from tests.mcp.helpers import LEGACY, Server, call, request

SERVED = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
UNSTRUCTURED = ("2024-11-05", "2025-03-26")  # before structured tool output existed


def initialize(server: Server, revision: Any) -> dict[str, Any]:
    init = server.ask(
        request(
            0,
            "initialize",
            {
                "protocolVersion": revision,
                "capabilities": {},
                "clientInfo": {"name": "tests", "version": "1"},
            },
        )
    )
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return init


@pytest.mark.parametrize("revision", SERVED)
def test_a_served_revision_is_answered_with_itself(server: Server, revision: str) -> None:
    assert initialize(server, revision)["result"]["protocolVersion"] == revision
    listed = server.ask(request(1, "tools/list"))["result"]
    assert [tool["name"] for tool in listed["tools"]] == list(NAMES)


@pytest.mark.parametrize("revision", ["2024-10-07", "2026-07-28", "2099-01-01", "", "latest"])
def test_any_other_revision_is_answered_with_the_newest(server: Server, revision: str) -> None:
    assert initialize(server, revision)["result"]["protocolVersion"] == LEGACY


@pytest.mark.parametrize("revision", SERVED)
def test_structured_content_only_from_the_revision_that_has_it(
    server: Server, revision: str
) -> None:
    initialize(server, revision)
    result = server.ask(call(1, "beam_version", modern_meta=False))["result"]
    failed = server.ask(call(2, "lean_goals", {"bogus": 1}, modern_meta=False))["result"]
    body = json.loads(result["content"][0]["text"])
    error = json.loads(failed["content"][0]["text"])
    assert body["name"] == "lean-beam-mcp" and result["isError"] is False
    assert error["code"] == "invalidInput" and error["data"]["fix"] and failed["isError"] is True
    if revision in UNSTRUCTURED:
        assert set(result) == {"content", "isError"}, result
        assert set(failed) == {"content", "isError"}, failed
    else:
        assert result["structuredContent"] == body
        assert failed["structuredContent"] == error


@pytest.mark.parametrize("revision", SERVED)
def test_tools_list_has_no_output_schema_before_structured_output(revision: str) -> None:
    from beam_mcp.router import tools_for_revision

    payload = {
        "tools": [
            {"name": "a", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}},
            {"name": "b", "inputSchema": {"type": "object"}},
        ]
    }
    rendered = tools_for_revision(payload, revision)
    expected_output = revision not in UNSTRUCTURED
    assert ("outputSchema" in rendered["tools"][0]) is expected_output
    assert rendered["tools"][1] == payload["tools"][1]
    assert "outputSchema" in payload["tools"][0]  # the served payload itself is never changed


@pytest.mark.parametrize("revision", UNSTRUCTURED)
def test_an_old_revision_lists_no_output_schema(server: Server, revision: str) -> None:
    initialize(server, revision)
    tools = server.ask(request(1, "tools/list"))["result"]["tools"]
    assert len(tools) == len(NAMES)
    assert all("outputSchema" not in tool for tool in tools)


def test_the_modern_family_keeps_structured_content(server: Server) -> None:
    result = server.ask(call(1, "beam_version"))["result"]
    assert result["structuredContent"] == json.loads(result["content"][0]["text"])
    assert result["resultType"] == "complete"
