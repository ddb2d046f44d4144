"""``LspClient.open_in``: a client hosted in a long-lived task group, as the broker keeps one."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from beam_runtime.lsp import messages
from beam_runtime.lsp.client import LspClient
from beam_runtime.lsp.errors import ServerExited
from tests.lsp.harness import FAKE_SERVER, WAIT, Recorder, base_env, gone

pytestmark = pytest.mark.anyio


async def test_hosted_client_serves_other_tasks_and_close_ends_it(project: Path) -> None:
    recorder = Recorder()
    uri = (project / "A.lean").as_uri()
    async with anyio.create_task_group() as host:
        client = await LspClient.open_in(
            host,
            [sys.executable, str(FAKE_SERVER)],
            cwd=str(project),
            env=base_env(project.parent),
            on_notification=recorder,
        )
        await client.initialize(messages.initialize_params(project), timeout=WAIT)

        async def open_document() -> None:
            await client.notify("textDocument/didOpen", messages.did_open(uri, 1, "def a := 1\n"))
            await client.request(
                "textDocument/waitForDiagnostics", messages.wait_for_diagnostics(uri, 1)
            )

        async with anyio.create_task_group() as caller:  # a different task uses the client
            caller.start_soon(open_document)
        assert recorder.of("textDocument/publishDiagnostics", uri)
        state = await client.request("$/fake/state")
        family = [client.pid, state["pid"], *(d["workerPid"] for d in state["documents"].values())]
        await client.close()
        assert not client.alive
    # the host group ended by itself: close() finished the hosted task
    assert all(gone(pid) for pid in family)


async def test_spawn_failure_is_raised_by_open_in(project: Path) -> None:
    async with anyio.create_task_group() as host:
        with pytest.raises(FileNotFoundError):
            await LspClient.open_in(host, [str(project / "no-such-lake"), "serve"], cwd=project)


async def test_last_stderr_lines_come_with_an_early_exit(project: Path) -> None:
    """A server dying at once: its stderr is drained before the failure is reported."""
    script = "import sys; sys.stderr.write('libleanshared.so: cannot open shared object\\n')"
    async with anyio.create_task_group() as host:
        client = await LspClient.open_in(host, [sys.executable, "-c", script], cwd=project)
        with pytest.raises(ServerExited) as info:
            await client.initialize(messages.initialize_params(project), timeout=WAIT)
        assert any("cannot open shared object" in line for line in info.value.stderr_tail)
        assert any("cannot open shared object" in line for line in client.stderr.snapshot())
        await client.close()
