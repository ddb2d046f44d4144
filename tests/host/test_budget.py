"""The memory budget over the fake Lean's workers, whose ballast is partly shared: the least
recently used idle document makes room, and a budget nothing can meet is `memoryBudget`."""

from __future__ import annotations

from pathlib import Path

import psutil

from tests.broker.fake import err, request_log
from tests.host.helpers import agent, host_list, lean_beam, ok, sync, until, workspace
from tests.mcp.helpers import Server
from tests.support.projects import lean_project

PRIVATE_MB = 48
BALLAST = {"FAKE_LEAN_WORKER_PRIVATE_MB": str(PRIVATE_MB), "FAKE_LEAN_WORKER_SHARED_MB": "32"}
FILES = {f"{name}.lean": f"def {name.lower()}Value : Nat := 1\n" for name in "ABC"}


def _pss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return 0


def _workers(root: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline", "cwd"]):
        try:
            command = " ".join(process.info["cmdline"] or [])
            if "fake_lean/worker.py" in command and process.info["cwd"] == str(root):
                found.append(process)
        except psutil.Error:
            continue
    return found


def _loaded(root: Path, count: int) -> bool:
    """``count`` workers run in ``root`` and each holds its private ballast."""
    workers = _workers(root)
    try:
        return len(workers) == count and all(_pss(w.pid) >= PRIVATE_MB << 20 for w in workers)
    except OSError:
        return False


def _host_pss() -> int:
    [host] = host_list()
    return int(host["pss_bytes"])


def test_opening_a_third_document_closes_the_least_recently_used_idle_one(
    agents: list[Server], tmp_path: Path
) -> None:
    root = lean_project(tmp_path / "proj", FILES)
    measuring = agent(agents, **BALLAST)
    sync(measuring, 1, root, "A.lean")
    until(lambda: _loaded(root, 1), "the first worker's ballast")
    one = _host_pss()
    sync(measuring, 2, root, "B.lean")
    until(lambda: _loaded(root, 2), "the second worker's ballast")
    two = _host_pss()
    assert two - one > (PRIVATE_MB << 20) // 2
    stopped = lean_beam("host", "stop", "--all")
    assert stopped.returncode == 0, stopped.stderr
    measuring.kill()
    until(lambda: not _workers(root), "the measuring host's workers to end")

    log = tmp_path / "requests.jsonl"
    budget = (one + two) // 2  # two documents are over it, one is not
    server = agent(
        agents, LEAN_BEAM_MEMORY_BUDGET=str(budget), FAKE_LEAN_REQUEST_LOG=str(log), **BALLAST
    )
    sync(server, 1, root, "A.lean")
    until(lambda: _loaded(root, 1), "A's ballast")
    sync(server, 2, root, "B.lean")
    until(lambda: _loaded(root, 2), "B's ballast")
    assert sync(server, 3, root, "C.lean")["diagnostics"]["complete"] is True
    closed = [
        e["uri"] for e in request_log(log) if e.get("notification") == "textDocument/didClose"
    ]
    assert [uri.rsplit("/", 1)[1] for uri in closed] == ["A.lean"]
    [found] = ok(server, 4, "beam_stats", {})["workspaces"]
    assert found["session"]["open_documents"] == 2


def test_a_budget_nothing_can_meet_answers_memory_budget(
    agents: list[Server], project: Path
) -> None:
    server = agent(agents, LEAN_BEAM_MEMORY_BUDGET="1M", **BALLAST)
    error = err(server, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    assert error["code"] == "memoryBudget", error
    data = error["data"]
    assert data["budget_bytes"] == 1 << 20 and data["used_bytes"] > data["budget_bytes"]
    assert data["retry_after_ms"] > 0 and "LEAN_BEAM_MEMORY_BUDGET" in data["fix"]
    assert "memory budget" in error["message"]


def test_a_worker_over_its_address_space_cap_answers_worker_out_of_memory(
    agents: list[Server], project: Path
) -> None:
    # The cap fits the fake language server (about 240 MiB of address space) but not a worker
    # holding an 800 MiB ballast: that worker dies as Lean's does, printing "out of memory".
    server = agent(agents, "--worker-memory-max", "512M", FAKE_LEAN_WORKER_PRIVATE_MB="800")
    error = err(server, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    assert error["code"] == "workerOutOfMemory", error
    assert error["data"]["path"] == "Main.lean" and error["data"]["cap_bytes"] == 512 << 20
    assert "512" not in error["data"]["fix"] and error["data"]["fix"]
    symbols = ok(server, 2, "lean_workspace_symbols", {**workspace(project), "query": "answer"})
    assert symbols["workspace"] == {"root": str(project)}  # the host and its Lean live on
