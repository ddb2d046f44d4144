"""Startup order, the watcher registration, and the fake's fatal-message rules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from beam_runtime.lsp import messages
from beam_runtime.lsp.client import LspClient
from beam_runtime.lsp.errors import ClientStateError
from tests.lsp.harness import FAKE_SERVER, WAIT, base_env, session

pytestmark = pytest.mark.anyio


async def test_initialize_returns_lean_capabilities(project: Path) -> None:
    async with session(project, initialize=False) as (client, _):
        result = await client.initialize(messages.initialize_params(project), timeout=WAIT)
        caps = result["capabilities"]
        assert caps["textDocumentSync"]["change"] == 2
        assert caps["definitionProvider"] is True
        assert result["serverInfo"] == {"name": "Lean 4 Server", "version": "0.3.0"}


async def test_nothing_may_be_sent_before_initialize(project: Path) -> None:
    async with session(project, initialize=False) as (client, _):
        with pytest.raises(ClientStateError):
            await client.request("textDocument/hover", {})
        with pytest.raises(ClientStateError):
            await client.notify("textDocument/didOpen", {})


async def test_registration_request_is_answered_with_null(project: Path) -> None:
    async with session(project) as (client, _):
        state = await client.request("$/fake/state")
        for _ in range(50):
            if state["registerAnswer"] is not None:
                break
            state = await client.request("$/fake/state")
        assert state["registerAnswer"] == {
            "jsonrpc": "2.0",
            "id": "register_lean_watcher",
            "result": None,
        }
        assert client.server_requests[0][0] == "client/registerCapability"


async def test_initialize_twice_is_refused(project: Path) -> None:
    async with session(project) as (client, _):
        with pytest.raises(ClientStateError):
            await client.initialize({}, timeout=WAIT)


async def test_cwd_is_the_project_root(project: Path) -> None:
    async with session(project) as (client, _):
        state = await client.request("$/fake/state")
        assert Path(state["cwd"]) == project


async def test_unknown_method_is_method_not_found(project: Path) -> None:
    from beam_runtime.lsp.errors import ResponseError

    async with session(project) as (client, _):
        with pytest.raises(ResponseError) as info:
            await client.request("textDocument/nonsense", {})
        assert info.value.code == -32601
        assert info.value.message == "No request handler found for 'textDocument/nonsense'"


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _run_fake(frames: list[dict[str, Any]], tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    data = b"".join(_frame(frame) for frame in frames)
    return subprocess.run(
        [sys.executable, str(FAKE_SERVER)],
        input=data,
        capture_output=True,
        env=base_env(tmp_path),
        cwd=tmp_path,
        timeout=WAIT,
        check=False,
    )


INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "initialized", "params": {}}


def test_fake_exits_1_on_a_message_without_params(tmp_path: Path) -> None:
    done = _run_fake(
        [INIT, INITIALIZED, {"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover"}], tmp_path
    )
    assert done.returncode == 1
    assert b"Watchdog error: Got invalid JSON-RPC message" in done.stderr


def test_fake_exits_1_when_initialized_does_not_follow(tmp_path: Path) -> None:
    hover = {"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {}}
    done = _run_fake([INIT, hover], tmp_path)
    assert done.returncode == 1
    assert b"Watchdog error" in done.stderr


def test_fake_exits_0_on_eof_and_writes_only_frames(tmp_path: Path) -> None:
    done = _run_fake([INIT, INITIALIZED], tmp_path)
    assert done.returncode == 0
    out = done.stdout
    while out:
        assert out.startswith(b"Content-Length: ")
        header, _, rest = out.partition(b"\r\n\r\n")
        length = int(header.split(b":")[1])
        json.loads(rest[:length])
        out = rest[length:]


async def test_client_shutdown_then_exit_code_zero(project: Path) -> None:
    async with LspClient.launch(
        [sys.executable, str(FAKE_SERVER)], cwd=project, env=base_env(project.parent)
    ) as client:
        await client.initialize(messages.initialize_params(project), timeout=WAIT)
        await client.shutdown(timeout=WAIT)
        await client.wait_exited()
        assert client.returncode == 0
