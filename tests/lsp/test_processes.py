"""Process management: setsid'd workers, tree kill, orphans, stderr draining, lake serve."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from beam_runtime.lsp import messages
from tests.lsp.harness import FAKE_LAKE, gone, last_diagnostics, open_and_wait, session

pytestmark = pytest.mark.anyio


async def _tree(client: object, project: Path, count: int) -> tuple[int, list[int]]:
    for index in range(count):
        uri = (project / f"F{index}.lean").as_uri()
        await open_and_wait(client, uri, f"def f{index} : Nat := {index}\n")  # type: ignore[arg-type]
    state = await client.request("$/fake/state")  # type: ignore[attr-defined]
    workers = [doc["workerPid"] for doc in state["documents"].values()]
    assert len(workers) == count and all(workers)
    return state["pid"], workers


async def test_close_kills_server_and_setsid_workers(project: Path) -> None:
    async with session(project, FAKE_LEAN_STUBBORN_WORKERS="1") as (client, _):
        server, workers = await _tree(client, project, 2)
        for worker in workers:
            assert os.getsid(worker) == worker, "fake workers must run in their own session"
        everything = [client.pid, server, *workers]
    assert all(gone(pid) for pid in everything)


async def test_orphaned_workers_of_a_dead_server_are_killed(project: Path) -> None:
    uri = (project / "Die.lean").as_uri()
    async with session(project, FAKE_LEAN_STUBBORN_WORKERS="1") as (client, _):
        _, workers = await _tree(client, project, 2)
        await client.notify("textDocument/didOpen", messages.did_open(uri, 1, "#fake_die\n"))
        await client.wait_exited()
        orphans = [pid for pid in workers if not gone(pid)]
    assert all(gone(pid) for pid in workers), f"left behind: {orphans}"


async def test_lake_serve_tree_is_killed(project: Path) -> None:
    argv = [str(FAKE_LAKE), "serve", "--"]
    async with session(project, argv=argv, FAKE_LEAN_STUBBORN_WORKERS="1") as (client, _):
        server, workers = await _tree(client, project, 1)
        assert server != client.pid, "lake serve must run the server as a child"
        assert psutil.Process(server).ppid() == client.pid
        everything = [client.pid, server, *workers]
    assert all(gone(pid) for pid in everything)


async def test_broken_lake_config_gives_header_errors(project: Path) -> None:
    (project / "lakefile.toml").write_text("FAKE_BROKEN = true\n")
    uri = (project / "A.lean").as_uri()
    argv = [str(FAKE_LAKE), "serve", "--"]
    async with session(project, argv=argv) as (client, rec):
        await open_and_wait(client, uri, "def a := 1\n")
        (diag,) = last_diagnostics(rec, uri)
        assert diag["message"] == (
            "Failed to configure the Lake workspace. Please restart the server after fixing "
            "the error above."
        )
        assert any(
            "falling back to plain `lean --server`" in line for line in client.stderr.snapshot()
        )


async def test_stderr_is_drained_and_tail_is_bounded(project: Path) -> None:
    async with session(project, FAKE_LEAN_STDERR_FLOOD="20000") as (client, _):
        assert await client.request("$/fake/state")
        tail = client.stderr.snapshot()
        assert 0 < len(tail) <= 64


async def test_server_runs_in_its_own_session(project: Path) -> None:
    async with session(project) as (client, _):
        assert os.getsid(client.pid) == client.pid


LAUNCHED = """
async def main():
    async with LspClient.launch([sys.argv[1], "60"], cwd=Path(sys.argv[2])) as client:
        print(client.pid, flush=True)
        await anyio.sleep(60)
"""
HOSTED = """
async def main():  # the broker's way: a client hosted in a long-lived task group
    async with anyio.create_task_group() as host:
        client = await LspClient.open_in(host, [sys.argv[1], "60"], cwd=Path(sys.argv[2]))
        print(client.pid, flush=True)
        await anyio.sleep(60)
"""
PARENT = """
import sys, anyio
from pathlib import Path
from beam_runtime.lsp.client import LspClient
{main}
anyio.run(main)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watchdog reads /proc")
@pytest.mark.parametrize("main", [LAUNCHED, HOSTED], ids=["launch", "open_in"])
def test_server_dies_with_a_killed_parent(project: Path, main: str) -> None:
    parent = subprocess.Popen(
        # `sleep` ignores its stdin, so only the parent's watchdog can end it early
        [
            sys.executable,
            "-c",
            PARENT.format(main=main),
            shutil.which("sleep") or "/bin/sleep",
            str(project),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert parent.stdout is not None
    server = int(parent.stdout.readline())
    parent.kill()
    parent.wait(timeout=10)
    deadline = time.monotonic() + 10
    while not gone(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(server)


def test_descendant_scan_reports_new_processes_and_forgets_ended_ones(tmp_path: Path) -> None:
    """The tracker's scan says when the tree grew (it then keeps scanning often)."""
    from beam_runtime.lsp import process

    script = "read a; sleep 60 & echo $!; read b; kill $!; wait; echo gone; read c"
    proc = process.spawn(["sh", "-c", script], tmp_path, None)
    stdin, stdout = proc.popen.stdin, proc.popen.stdout
    assert stdin is not None and stdout is not None
    try:
        assert process.refresh_descendants(proc) is False  # nothing below the shell yet
        stdin.write(b"\n")
        child = int(stdout.readline())
        assert process.refresh_descendants(proc) is True
        assert child in {known.pid for known in proc.known}
        assert process.refresh_descendants(proc) is False  # same tree: nothing new
        stdin.write(b"\n")
        assert stdout.readline() == b"gone\n"
        assert process.refresh_descendants(proc) is False
        assert child not in {known.pid for known in proc.known}
    finally:
        process.kill_tree(proc)
        for pipe in (proc.popen.stdin, proc.popen.stdout, proc.popen.stderr):
            if pipe is not None:
                pipe.close()
