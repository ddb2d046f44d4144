"""A host's life through real processes: leases, idle exit, crashes, concurrent starts,
runtime upgrades, and what is left when everything is killed."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import psutil

from tests.broker.fake import FAKE_CMD, FAST_FAKE, err, fake_processes, request_log
from tests.host.conftest import GOAL
from tests.host.helpers import (
    agent,
    host_of,
    hosts_here,
    lean_beam,
    lean_servers,
    ok,
    sync,
    until,
    workspace,
)
from tests.mcp.helpers import REPO, Server, call, minimal_env, structured
from tests.support.hosts import wait_gone

SLOW = "example : True := by\n  sleep 4000\n  trivial\n"


def test_a_killed_client_ends_its_lease_and_the_host_leaves_after_its_idle_time(
    agents: list[Server], project: Path
) -> None:
    first = agent(agents, LEAN_BEAM_HOST_IDLE_S="1")
    second = agent(agents, LEAN_BEAM_HOST_IDLE_S="1")
    sync(first, 1, project)
    sync(second, 1, project)
    [host] = hosts_here()
    assert host_of(second, 2, project)["connections"] == 2
    first.proc.kill()  # SIGKILL: no goodbye, the kernel closes its socket
    until(lambda: host_of(second, 3, project)["connections"] == 1, "the lease to end")
    assert host.is_running() and fake_processes(project)
    lean = fake_processes(project)
    second.proc.kill()
    assert not wait_gone([host.pid], 20), "the host outlived its idle time"
    assert not wait_gone([p.pid for p in lean], 10), "Lean outlived its host"


def test_documents_nobody_uses_close_while_agents_stay(agents: list[Server], project: Path) -> None:
    server = agent(agents, LEAN_BEAM_HOST_IDLE_S="1")
    assert sync(server, 1, project)["version"] == 1
    [host] = hosts_here()

    def open_documents() -> int:
        found = [w for w in ok(server, 9, "beam_stats", {})["workspaces"]]
        return int(found[0]["session"]["open_documents"]) if found else 0

    until(lambda: open_documents() == 0, "the unused document to close")
    assert host.is_running()
    assert sync(server, 2, project)["version"] == 2  # opened again, under the next version


def test_a_host_killed_mid_call_answers_backend_restarted_and_the_next_call_works(
    agents: list[Server], project: Path, tmp_path: Path
) -> None:
    (project / "Slow.lean").write_text(SLOW)
    log = tmp_path / "requests.jsonl"
    server = agent(agents, FAKE_LEAN_REQUEST_LOG=str(log))
    sync(server, 1, project)
    made = ok(server, 2, "lean_run_at_handle", {**workspace(project), **GOAL, "text": "skip"})
    handle = made["next_handle"]
    [host] = hosts_here()
    server.send(call(3, "lean_sync", {**workspace(project), "path": "Slow.lean"}))
    until(
        lambda: any(e.get("uri", "").endswith("/Slow.lean") for e in request_log(log)),
        "the slow file to reach Lean",
    )
    host.kill()
    killed = time.monotonic()
    reply, _ = server.read_until(3)
    assert time.monotonic() - killed < 5
    error = structured(reply)
    assert reply["result"]["isError"] is True
    assert error["code"] == "backendRestarted", error
    assert error["data"]["retry_after_ms"] > 0 and error["data"]["fix"]
    after = sync(server, 4, project)
    assert after["diagnostics"]["complete"] is True
    assert after["version"] == 2  # the new host never hands out a version the old one did
    [again] = hosts_here()
    assert again.pid != host.pid
    stale = err(
        server,
        5,
        "lean_run_with",
        {**workspace(project), "path": "Main.lean", "handle": handle, "text": "skip"},
    )
    assert stale["code"] == "handleNotFound" and stale["data"]["reason"] == "hostRestarted"


def test_a_new_runtime_gets_a_host_of_its_own_and_the_old_one_drains(
    agents: list[Server], project: Path, tmp_path: Path
) -> None:
    newer = tmp_path / "newer"
    for package in ("beam_runtime", "beam_mcp", "beam_install"):
        shutil.copytree(
            REPO / package, newer / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    old = agent(agents, LEAN_BEAM_HOST_IDLE_S="1")
    sync(old, 1, project)
    [old_host] = hosts_here()
    new = Server(  # the same command and environment; `python -m` finds the newer code first
        "--lean-cmd",
        FAKE_CMD,
        env=minimal_env(**FAST_FAKE, LEAN_BEAM_HOST_IDLE_S="1"),
        cwd=str(newer),
    )
    agents.append(new)
    sync(new, 1, project)
    hosts = hosts_here()
    assert len(hosts) == 2
    assert host_of(new, 2, project)["pid"] != old_host.pid
    assert old.close()[0] == 0  # the old runtime's last agent leaves
    assert not wait_gone([old_host.pid], 20), "the old host did not drain"
    assert [h.pid for h in hosts_here()] == [host_of(new, 3, project)["pid"]]
    assert sync(new, 4, project)["diagnostics"]["complete"] is True


def test_an_unusable_socket_directory_falls_back_in_auto_and_fails_cleanly_if_required(
    agents: list[Server], project: Path, tmp_path: Path
) -> None:
    blocker = Path(os.environ["XDG_RUNTIME_DIR"]) / "file"  # short: socket paths are limited
    blocker.write_text("")
    fallback = agent(agents, XDG_RUNTIME_DIR=str(blocker))
    assert sync(fallback, 1, project)["diagnostics"]["complete"] is True
    host = host_of(fallback, 2, project)
    assert host["mode"] == "in-process" and host["pid"] == fallback.proc.pid
    assert "cannot create the host socket directory" in host["reason"]
    ok(fallback, 3, "lean_drop_workspace", workspace(project))
    until(lambda: not fake_processes(project), "the in-process session to stop")
    strict = agent(agents, XDG_RUNTIME_DIR=str(blocker), LEAN_BEAM_HOST="required")
    error = err(strict, 1, "lean_sync", {**workspace(project), "path": "Main.lean"})
    assert error["code"] == "runtimeSetup" and error["data"]["category"] == "hostUnavailable"
    assert "cannot create the host socket directory" in error["message"]
    assert error["data"]["fix"]
    assert not fake_processes(project), "required started Lean without a host"


def test_after_sigkill_of_every_client_and_host_no_lean_process_is_left(
    agents: list[Server], project: Path, tmp_path: Path
) -> None:
    other = project.parent / "other"
    shutil.copytree(project, other)
    clients = [agent(agents, FAKE_LEAN_STUBBORN_WORKERS="1") for _ in range(2)]
    for rid, root in enumerate((project, other.resolve()), start=1):
        for client in clients:
            sync(client, rid, root)
    lean = fake_processes(project) + fake_processes(other.resolve())
    assert len(lean_servers(project)) == 1 and len(lean_servers(other.resolve())) == 1
    hosts = hosts_here()
    assert len(hosts) == 2
    for client in clients:
        client.proc.kill()
    for host in hosts:
        host.kill()
    assert not wait_gone([p.pid for p in lean], 10), "Lean processes outlived every host"


def test_the_host_runs_in_its_own_session_and_survives_its_starter(
    agents: list[Server], project: Path
) -> None:
    starter = agent(agents)
    sync(starter, 1, project)
    [host] = hosts_here()
    assert os.getsid(host.pid) == host.pid  # its own session: no terminal signal reaches it
    starter.proc.send_signal(2)  # Ctrl-C of the agent
    starter.proc.wait(20)
    assert host.is_running() and host.status() != psutil.STATUS_ZOMBIE
    later = agent(agents)
    assert sync(later, 1, project)["version"] == 1  # the same document, still open
    assert hosts_here()[0].pid == host.pid


def test_host_stop_mid_call_answers_backend_restarted(
    agents: list[Server], project: Path, tmp_path: Path
) -> None:
    (project / "Slow.lean").write_text(SLOW)
    log = tmp_path / "requests.jsonl"
    server = agent(agents, FAKE_LEAN_REQUEST_LOG=str(log))
    sync(server, 1, project)
    server.send(call(2, "lean_sync", {**workspace(project), "path": "Slow.lean"}))
    until(
        lambda: any(e.get("uri", "").endswith("/Slow.lean") for e in request_log(log)),
        "the slow file to reach Lean",
    )
    stopped = lean_beam("host", "stop", "--root", str(project))
    assert stopped.returncode == 0, stopped.stderr
    reply, _ = server.read_until(2)
    assert structured(reply)["code"] == "backendRestarted"
    assert not lean_servers(project)
    assert sync(server, 3, project)["version"] == 2  # a new host opened the file again
