"""Cancellation, timeouts, crashed workers and a dying server."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from beam_runtime.lsp import messages
from beam_runtime.lsp.errors import (
    ContentModified,
    RequestCancelled,
    RequestTimeout,
    ServerExited,
    WorkerCrashed,
)
from tests.lsp.harness import open_and_wait, session

pytestmark = pytest.mark.anyio

SLOW = "example : True := by\n  sleep 3000\n  trivial\n"


async def _pending_methods(client: object) -> list[str]:
    state = await client.request("$/fake/state")  # type: ignore[attr-defined]
    return [m for m in state["pending"] if m != "$/fake/state"]


async def test_cancel_request_yields_request_cancelled(project: Path) -> None:
    uri = (project / "S.lean").as_uri()
    async with session(project) as (client, _):
        await client.notify("textDocument/didOpen", messages.did_open(uri, 1, SLOW))
        pending = await client.send_request("textDocument/hover", messages.position(uri, 2, 2))
        await pending.cancel()
        with pytest.raises(RequestCancelled) as info:
            await pending.result()
        assert info.value.code == -32800 and info.value.message == ""
        state = await client.request("$/fake/state")
        assert state["cancelRequests"] == [pending.id]


async def test_timeout_cancels_on_the_server(project: Path) -> None:
    uri = (project / "S.lean").as_uri()
    async with session(project) as (client, _):
        await client.notify("textDocument/didOpen", messages.did_open(uri, 1, SLOW))
        with pytest.raises(RequestTimeout):
            await client.request("textDocument/hover", messages.position(uri, 2, 2), timeout=0.2)
        with anyio.fail_after(10):
            while await _pending_methods(client):
                await anyio.sleep(0.05)


async def test_caller_cancellation_sends_cancel_request(project: Path) -> None:
    uri = (project / "S.lean").as_uri()
    async with session(project) as (client, _):
        await client.notify("textDocument/didOpen", messages.did_open(uri, 1, SLOW))
        with anyio.move_on_after(0.2):
            await client.request("textDocument/hover", messages.position(uri, 2, 2))
        with anyio.fail_after(10):
            while await _pending_methods(client):
                await anyio.sleep(0.05)


async def test_legacy_edit_mode_answers_file_changed(project: Path) -> None:
    uri = (project / "S.lean").as_uri()
    async with session(project, FAKE_LEAN_EDIT_MODE="legacy") as (client, _):
        await client.notify("textDocument/didOpen", messages.did_open(uri, 1, SLOW))
        pending = await client.send_request("textDocument/hover", messages.position(uri, 2, 2))
        await client.notify("textDocument/didChange", messages.did_change_full(uri, 2, SLOW + "\n"))
        with pytest.raises(ContentModified, match=r"File changed\."):
            await pending.result()


async def test_crashed_worker_fails_pending_and_holds_until_change(project: Path) -> None:
    uri = (project / "C.lean").as_uri()
    text = "def a : Nat := 1\nexample : True := by\n  sleep 300\n  trivial\n#fake_crash_once\n"
    async with session(project) as (client, rec):
        await client.notify("textDocument/didOpen", messages.did_open(uri, 1, text))
        waiting = await client.send_request(
            "textDocument/waitForDiagnostics", messages.wait_for_diagnostics(uri, 1)
        )
        with pytest.raises(WorkerCrashed) as info:
            await waiting.result()
        assert info.value.code == -32902
        # the fatal progress comes from another thread of the fake than the error answer
        await rec.wait_for(
            lambda: rec.of("$/lean/fileProgress", uri)[-1]["processing"][0]["kind"] == 2
        )
        held = await client.send_request("textDocument/hover", messages.position(uri, 0, 4))
        await anyio.sleep(0.3)
        assert not held.answered, "a request to a crashed worker must be held"
        await client.notify("textDocument/didChange", messages.did_change_full(uri, 2, text))
        hover = await held.result()
        assert "a : Nat" in hover["contents"]["value"]


async def test_worker_exit_code_one_is_worker_exited(project: Path) -> None:
    uri = (project / "C.lean").as_uri()
    async with session(project) as (client, _):
        # the crash waits for a slow command, so the request is pending when the worker dies
        # (a request that arrives after the crash is held until the next change)
        text = "example : True := by\n  sleep 300\n  trivial\n#fake_crash 1\n"
        await client.notify("textDocument/didOpen", messages.did_open(uri, 1, text))
        with pytest.raises(WorkerCrashed) as info:
            await client.request("textDocument/waitForDiagnostics", {"uri": uri, "version": 1})
        assert info.value.code == -32901
        assert info.value.message == f"Server process for {uri} crashed, see stderr for exception."


async def test_dead_server_fails_pending_requests(project: Path) -> None:
    uri = (project / "D.lean").as_uri()
    async with session(project) as (client, _):
        await open_and_wait(client, uri, "def a : Nat := 1\n")
        text = (
            "def a : Nat := 1\nexample : True := by\n  sleep 200\n  trivial\n"
            "#fake_die\ndef b := 2\n"
        )
        await client.notify("textDocument/didChange", messages.did_change_full(uri, 2, text))
        pending = await client.send_request("textDocument/hover", messages.position(uri, 5, 4))
        with pytest.raises(ServerExited) as info:
            await pending.result()
        assert info.value.returncode == 1
        assert any("#fake_die" in line for line in info.value.stderr_tail)
        with pytest.raises(ServerExited):
            await client.request("textDocument/hover", messages.position(uri, 0, 4))
