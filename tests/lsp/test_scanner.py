"""One process-tree scan shared by every live Lean server (`beam_runtime.lsp.scanner`).

Real fake-Lean servers, each with file workers of its own (grandchildren of this process that
run in sessions of their own), in one event loop.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import pytest

from beam_runtime.lsp import messages
from beam_runtime.lsp.client import LspClient
from beam_runtime.lsp.scanner import SCANNER
from tests.lsp.harness import FAKE_SERVER, WAIT, base_env, gone, open_and_wait

pytestmark = pytest.mark.anyio
SESSIONS = 3
INTERVAL = 0.05


def _project(base: Path, index: int) -> Path:
    root = base / f"p{index}"
    root.mkdir()
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.33.0\n")
    return root


@asynccontextmanager
async def _servers(tmp_path: Path) -> AsyncIterator[list[tuple[LspClient, list[int]]]]:
    """`SESSIONS` fake servers, two open documents (two file workers) each."""
    async with AsyncExitStack() as stack:
        found = []
        for index in range(SESSIONS):
            root = _project(tmp_path, index)
            env = base_env(tmp_path, FAKE_LEAN_STUBBORN_WORKERS="1")
            argv = [sys.executable, str(FAKE_SERVER)]
            launch = LspClient.launch(
                argv, cwd=root, env=env, request_timeout=WAIT, track_interval=INTERVAL
            )
            client = await stack.enter_async_context(launch)
            await client.initialize(messages.initialize_params(root), timeout=WAIT)
            for doc in ("A", "B"):
                await open_and_wait(client, (root / f"{doc}.lean").as_uri(), f"def {doc} := 1\n")
            state = await client.request("$/fake/state")
            workers = [d["workerPid"] for d in state["documents"].values()]
            assert len(workers) == 2 and all(workers)
            found.append((client, workers))
        yield found


async def _until_known(client: LspClient, pids: list[int]) -> None:
    with anyio.fail_after(WAIT):
        while not set(pids) <= client.descendants:
            await anyio.sleep(INTERVAL)


async def test_each_session_knows_its_own_descendants_only(tmp_path: Path) -> None:
    async with _servers(tmp_path) as servers:
        for client, workers in servers:
            await _until_known(client, workers)
        everyone = {pid for client, workers in servers for pid in (client.pid, *workers)}
        for client, workers in servers:
            others = everyone - {client.pid, *workers}
            assert not client.descendants & others, "a session claimed another's processes"
            assert client.pid not in client.descendants
        all_pids = sorted(everyone)
    assert all(gone(pid) for pid in all_pids), "a closed session left processes behind"


async def test_one_scan_per_tick_covers_every_session(tmp_path: Path) -> None:
    async with _servers(tmp_path) as servers:
        for client, workers in servers:
            await _until_known(client, workers)
        ticks, per_session = SCANNER.counts()
        with anyio.fail_after(WAIT):
            while SCANNER.counts()[0] < ticks + 3:
                await anyio.sleep(INTERVAL)
        later_ticks, later = SCANNER.counts()
        pids = [client.pid for client, _ in servers]
        # Every /proc read updated every live session: N sessions, one read per tick.
        assert [later[pid] - per_session[pid] for pid in pids] == [later_ticks - ticks] * SESSIONS
    with anyio.fail_after(WAIT):
        while SCANNER.running:  # nothing registered: the thread ends, an idle process pays nothing
            await anyio.sleep(INTERVAL)
