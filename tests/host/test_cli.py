"""`lean-beam host list|stop` and the hosts `lean-beam doctor` reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.host.helpers import agent, host_list, hosts_here, lean_beam, sync, until
from tests.mcp.helpers import Server

FIELDS = {
    "root",
    "toolchain",
    "runtime_id",
    "pid",
    "socket",
    "connections",
    "documents",
    "lean_processes",
    "pss_bytes",
    "idle_s",
}


def test_host_list_shows_every_host_and_host_stop_ends_one(
    agents: list[Server], project: Path
) -> None:
    other = project.parent / "other"
    shutil.copytree(project, other)
    other = other.resolve()
    server = agent(agents)
    sync(server, 1, project)
    sync(server, 2, other)
    hosts = sorted(host_list(), key=lambda h: h["root"])
    assert [h["root"] for h in hosts] == sorted([str(project), str(other)])
    for host in hosts:
        assert set(host) == FIELDS
        assert host["toolchain"] == "leanprover/lean4:v4.24.0"
        assert host["runtime_id"].startswith("dev-")
        assert host["connections"] == 1 and host["documents"] == 1
        assert host["lean_processes"] >= 2 and host["pss_bytes"] > 0  # the server and a worker
        assert host["socket"].endswith(".sock") and len(host["socket"].encode()) < 100
        assert host["idle_s"] >= 0
    assert {h["pid"] for h in hosts} == {p.pid for p in hosts_here()}
    text = lean_beam("host", "list")
    assert text.returncode == 0 and str(project) in text.stdout and "agent(s)" in text.stdout

    stopped = lean_beam("host", "stop", "--root", str(project), "--json")
    assert stopped.returncode == 0, stopped.stderr
    body = json.loads(stopped.stdout)
    assert [h["root"] for h in body["stopped"]] == [str(project)] and body["failed"] == []
    assert [h["root"] for h in host_list()] == [str(other)]
    assert sync(server, 3, project)["diagnostics"]["complete"] is True  # a new host
    until(lambda: len(host_list()) == 2, "the new host to be listed")

    usage = lean_beam("host", "stop")
    assert usage.returncode == 2 and "--root DIR or --all" in usage.stderr
    everything = lean_beam("host", "stop", "--all")
    assert everything.returncode == 0 and host_list() == []


def test_doctor_lists_the_live_hosts(agents: list[Server], project: Path) -> None:
    sync(agent(agents), 1, project)
    done = lean_beam("doctor", "--json")
    checks = json.loads(done.stdout)["checks"]
    hosts = [c for c in checks if c["section"] == "shared Lean hosts"]
    assert hosts[0]["detail"].startswith("1 running")
    assert hosts[1]["name"] == str(project) and "Lean process(es)" in hosts[1]["detail"]
