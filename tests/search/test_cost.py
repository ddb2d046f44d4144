"""What an unchanged ``lean_search`` touches: not every file of the workspace again.

The server runs under ``strace`` (stat-like system calls only, with timestamps): during a burst
of searches with nothing changed, the source files stat'ed are far fewer than one pass over the
workspace, which is what every search used to cost. Where strace is missing or cannot trace,
the test is skipped, except under CI (``CI`` set), where that is a failure.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from tests.broker.fake import FAKE_CMD, FAST_FAKE, ok, workspace
from tests.mcp.helpers import Server, minimal_env
from tests.support.projects import lean_project
from tests.support.tracing import strace_or_skip


@pytest.fixture(autouse=True)
def _in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests watch the MCP server's own process (its trips off the loop, its children, its
    system calls): they run it with the broker in-process. The shared host has its own tests
    in tests/host."""
    monkeypatch.setenv("LEAN_BEAM_HOST", "off")


FILES = 1500
SEARCHES = 20
STATS = "%%stat"  # every stat-like system call of this architecture
_LINE = re.compile(r'^(?:\d+ +)?(\d+\.\d+) \w+\((?:AT_FDCWD, )?"([^"]+)"')


def test_an_unchanged_search_does_not_stat_every_file(
    servers: list[Server], tmp_path: Path
) -> None:
    strace = strace_or_skip("--seccomp-bpf", "-e", f"trace={STATS}")
    files = {f"Part{n % 30}/F{n}.lean": f"def filler_{n} : Nat := {n}\n" for n in range(FILES)}
    root = lean_project(tmp_path / "proj", files)
    log = tmp_path / "server.strace"
    env = minimal_env(**FAST_FAKE, XDG_CACHE_HOME=str(tmp_path / "cache"))
    tracer = [strace, "-f", "-qq", "-ttt", "--seccomp-bpf", "-e", f"trace={STATS}", "-o", str(log)]
    server = Server("--lean-cmd", FAKE_CMD, env=env, prefix=tracer)
    servers.append(server)
    args = {**workspace(root), "query": "filler_7"}
    for rid in range(1, 4):  # the first build, then past the racy window of its reads
        assert ok(server, rid, "lean_search", args)["complete"] is True
    time.sleep(2.2)  # racy files are read again once, 2 s after their last change
    for rid in range(4, 7):
        assert ok(server, rid, "lean_search", args)["hits"]
    started = time.time()
    for rid in range(10, 10 + SEARCHES):
        assert ok(server, rid, "lean_search", args)["hits"][0]["name"] == "filler_7"
    ended = time.time()
    server.close()
    stats = _stats_of_sources(log, root, started, ended)
    assert stats < FILES, f"{stats} stats of source files for {SEARCHES} unchanged searches"


def _stats_of_sources(log: Path, root: Path, started: float, ended: float) -> int:
    count = 0
    prefix = str(root) + os.sep
    for line in log.read_text(errors="replace").splitlines():
        found = _LINE.match(line)
        if found is None:
            continue
        when, path = float(found.group(1)), found.group(2)
        if started <= when <= ended and path.startswith(prefix) and path.endswith(".lean"):
            count += 1
    return count
