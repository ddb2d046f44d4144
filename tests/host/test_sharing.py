"""Several agents on one project share one host: one Lean server, warm for a late agent, and
the same answers as the in-process broker."""

from __future__ import annotations

import json
import re
import shutil
import threading
from pathlib import Path
from typing import Any

from tests.host.conftest import GOAL
from tests.host.helpers import agent, host_of, hosts_here, lean_servers, ok, sync, workspace
from tests.mcp.helpers import Server, call


def _header_loads(server: Server, rid: int, root: Path) -> int:
    stats = ok(server, rid, "beam_stats", {})
    found = [w for w in stats["workspaces"] if w["root"] == str(root)]
    return int(found[0]["lean"]["header_loads"])


def test_three_agents_run_one_lean_server_and_a_fourth_finds_it_warm(
    agents: list[Server], project: Path
) -> None:
    three = [agent(agents) for _ in range(3)]
    for rid, each in enumerate(three, start=1):
        assert sync(each, rid, project)["diagnostics"]["complete"] is True
    assert len(lean_servers(project)) == 1
    hosts = hosts_here()
    assert len(hosts) == 1
    host = host_of(three[0], 10, project)
    assert host == {"mode": "shared", "pid": hosts[0].pid, "connections": 3}
    loads = _header_loads(three[0], 11, project)
    assert loads == 1
    late = agent(agents)
    goals = ok(late, 1, "lean_goals", {**workspace(project), **GOAL, "mode": "before"})
    assert goals["goals"][0]["target"] == "1 + 1 = 2"
    assert _header_loads(late, 2, project) == loads  # no header was loaded again
    assert host_of(late, 3, project)["connections"] == 4
    assert len(lean_servers(project)) == 1


def test_two_agents_starting_at_the_same_instant_end_on_one_host(
    agents: list[Server], project: Path
) -> None:
    pair = [agent(agents) for _ in range(2)]
    answers: list[dict[str, Any]] = []
    go = threading.Barrier(2)

    def first_call(server: Server) -> None:
        go.wait()
        answers.append(
            server.ask(call(1, "lean_sync", {**workspace(project), "path": "Main.lean"}))
        )

    threads = [threading.Thread(target=first_call, args=(each,)) for each in pair]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert [a["result"]["isError"] for a in answers] == [False, False], answers
    assert len(hosts_here()) == 1
    assert len(lean_servers(project)) == 1
    assert host_of(pair[0], 2, project)["connections"] == 2


SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("lean_sync", {"path": "Main.lean", "diagnostics_in_result": True}),
    ("lean_hover", {"path": "Main.lean", "line": 1, "character": 4}),
    ("lean_goals", {**GOAL, "mode": "before"}),
    ("lean_document_symbols", {"path": "Main.lean"}),
    ("lean_todo", {"path": "Main.lean"}),
    ("lean_run_at", {**GOAL, "text": "rfl"}),
    ("lean_run_at_handle", {**GOAL, "text": "skip"}),
    (
        "lean_try",
        {
            "path": "Main.lean",
            "positions": [{"line": 3, "character": 2}],
            "tactics": ["rfl", "simp", "bogus"],
        },
    ),
    ("lean_update", {"path": "Main.lean"}),
    ("lean_goals", {"path": "Missing.lean", "line": 0, "character": 0, "mode": "before"}),
    ("lean_hover", {"path": "Main.lean", "line": 99, "character": 0}),
    ("lean_search", {"query": "answerA"}),
    ("lean_close", {"path": "Main.lean"}),
    ("lean_drop_workspace", {}),
    ("lean_drop_workspace", {}),
]
HANDLE = re.compile(r'"id":"[A-Za-z0-9_-]{43}"')
UPDATES = re.compile(r'"updates":\d+')  # how many progress reports Lean sent: timing


def _transcript(server: Server, root: Path) -> list[str]:
    """Each answer's text (what the agent reads), with the root, handle ids and the number of
    progress reports masked."""
    texts = []
    for rid, (tool, args) in enumerate(SCRIPT, start=1):
        reply = server.ask(call(rid, tool, {**workspace(root), **args}))
        text = reply["result"]["content"][0]["text"]
        text = HANDLE.sub('"id":"<handle>"', text.replace(str(root), "<root>"))
        texts.append(UPDATES.sub('"updates":<n>', text))
    return texts


def test_answers_are_the_in_process_answers_byte_for_byte(
    agents: list[Server], project: Path, tmp_path: Path
) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(project, twin)
    shared = _transcript(agent(agents), project)
    local = _transcript(agent(agents, LEAN_BEAM_HOST="off"), twin.resolve())
    assert hosts_here(), "the first agent did not run on a host"
    for index, (a, b) in enumerate(zip(shared, local, strict=True)):
        assert a == b, (SCRIPT[index][0], json.loads(a), json.loads(b))


# Modules of the broker and of the Lean client: a server whose workspace is on a host never
# needs them in its own process.
BROKER_MODULES = (
    "beam_runtime.broker.service",
    "beam_runtime.broker.session.session",
    "beam_runtime.broker.session.manager",
    "beam_runtime.lsp.client",
)


def _imported(stderr: bytes) -> set[str]:
    """Module names from ``PYTHONPROFILEIMPORTTIME`` lines (``import time: self | cum | name``)."""
    names = set()
    for line in stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def test_an_agent_whose_host_runs_imports_none_of_the_broker(
    agents: list[Server], project: Path
) -> None:
    first = agent(agents)
    assert sync(first, 1, project)["diagnostics"]["complete"] is True
    late = agent(agents, PYTHONPROFILEIMPORTTIME="1")
    goals = ok(late, 1, "lean_goals", {**workspace(project), **GOAL, "mode": "before"})
    assert goals["goals"][0]["target"] == "1 + 1 = 2"
    assert host_of(late, 2, project)["mode"] == "shared"
    code, stderr, _ = late.close()
    assert code == 0
    imported = _imported(stderr)
    assert "beam_mcp.hosted" in imported  # the listing is there to read
    assert [name for name in BROKER_MODULES if name in imported] == []
