"""An answer never echoes a huge input whole: errors quote bounded excerpts of what they name.

Through the real server (the fake Lean for the Lean tools): a 1 MB path, a 10 MB protocol
version, a 1 MB tool name, log level or method, thousands of undeclared keys. Each answer stays
small and still says what was wrong, with the start of the value and its length.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.broker.fake import fake_server, workspace
from tests.mcp.helpers import Server, call, meta, modern, request

SMALL = 64 * 1024  # no answer below may come near this


def _raw_answer(server: Server, message: dict[str, Any] | bytes) -> bytes:
    server.send(message)
    line = server.lines.get(timeout=60)
    assert line, "server closed stdout"
    return line


def _check(line: bytes, start: str, length: int) -> dict[str, Any]:
    assert len(line) < SMALL, f"an answer of {len(line)} bytes echoes the input"
    text = line.decode()
    assert start in text, text[:500]  # the excerpt begins as the value did
    assert f"{length} characters" in text, text[:2000]  # and says how long it was
    answer: dict[str, Any] = json.loads(line)
    return answer


def test_a_huge_path_is_quoted_as_an_excerpt(servers: list[Server], project: Path) -> None:
    server = fake_server(servers)
    path = "Missing" + "x" * (1 << 20) + ".lean"
    line = _raw_answer(server, call(1, "lean_sync", {**workspace(project), "path": path}))
    answer = _check(line, "Missingxxxx", len(path))
    body = answer["result"]["structuredContent"]
    assert answer["result"]["isError"] is True and body["code"] == "invalidInput", body
    assert body["data"]["fix"], body


@pytest.mark.parametrize(
    "where", ["protocolVersion", "logLevel", "tool", "method", "initialize", "envelope"]
)
def test_huge_protocol_values_are_quoted_as_excerpts(where: str) -> None:
    server = Server()
    try:
        value = "v" + "9" * (10 << 20 if where == "protocolVersion" else 1 << 20)
        message: dict[str, Any] | bytes
        if where == "protocolVersion":
            message = modern(1, "tools/list", meta_extra={meta_key("protocolVersion"): value})
        elif where == "logLevel":
            message = modern(1, "tools/list", meta_extra={meta_key("logLevel"): value})
        elif where == "tool":
            message = call(1, value, {})
        elif where == "method":
            message = modern(1, value)
        elif where == "initialize":
            params = {"protocolVersion": "2025-11-25", "capabilities": {}, value: 1}
            message = request(1, "initialize", params)
        else:
            message = {**request(1, "tools/list", {"_meta": meta()}), value: 1}
        line = _raw_answer(server, message)
        answer = _check(line, "v99999", len(value))
        assert "error" in answer or answer["result"].get("isError"), answer
        assert server.ask(modern(2, "tools/list"))["result"]["tools"]
    finally:
        server.kill()


def test_thousands_of_undeclared_keys_are_counted_not_listed() -> None:
    server = Server()
    try:
        params = {"protocolVersion": "2025-11-25", "capabilities": {}}
        params.update({f"extra{i:05d}" + "k" * 200: i for i in range(5000)})
        line = _raw_answer(server, request(1, "initialize", params))
        assert len(line) < SMALL, len(line)
        text = line.decode()
        assert "extra00000" in text and "5000" in text, text[:2000]
    finally:
        server.kill()


def meta_key(name: str) -> str:
    return f"io.modelcontextprotocol/{name}"
