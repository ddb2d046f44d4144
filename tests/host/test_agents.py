"""What agents sharing a host keep apart (handles, scratch documents) and what they share
(document versions), and what lean_drop_workspace does while others use the workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.broker.fake import err
from tests.host.conftest import GOAL, MAIN
from tests.host.helpers import agent, lean_servers, ok, sync, until, workspace
from tests.mcp.helpers import Server


def _handle(server: Server, rid: int, root: Path) -> dict[str, Any]:
    made = ok(server, rid, "lean_run_at_handle", {**workspace(root), **GOAL, "text": "skip"})
    handle: dict[str, Any] = made["next_handle"]
    return handle


def _continue(server: Server, rid: int, root: Path, handle: dict[str, Any]) -> dict[str, Any]:
    args = {**workspace(root), "path": "Main.lean", "handle": handle, "text": "skip"}
    return ok(server, rid, "lean_run_with", args)


def _refused(server: Server, rid: int, root: Path, handle: dict[str, Any]) -> dict[str, Any]:
    args = {**workspace(root), "path": "Main.lean", "handle": handle, "text": "skip"}
    return err(server, rid, "lean_run_with", args)


def _scratch_documents(server: Server, rid: int, root: Path) -> int:
    stats = ok(server, rid, "beam_stats", {})
    [found] = [w for w in stats["workspaces"] if w["root"] == str(root)]
    return int(found["session"]["scratch_documents"])


def test_handles_belong_to_their_agent_and_versions_are_shared(
    agents: list[Server], project: Path
) -> None:
    first, second = agent(agents), agent(agents)
    sync(first, 1, project)
    sync(second, 1, project)
    mine, theirs = _handle(first, 2, project), _handle(second, 2, project)
    foreign = _refused(second, 3, project, mine)
    assert foreign["code"] == "handleNotFound" and foreign["data"]["reason"] == "otherAgent"
    assert "another agent" in foreign["message"] and foreign["data"]["fix"]
    assert _continue(first, 3, project, mine)["success"] is True  # still the first agent's
    (project / "Main.lean").write_text(MAIN + "-- edited\n")
    assert sync(first, 4, project)["version"] == 2
    stale = _refused(second, 4, project, theirs)  # the first agent's edit made it stale
    assert stale["code"] == "contentModified" and stale["data"]["reason"] == "sourceChanged"
    seen = ok(second, 5, "lean_update", {**workspace(project), "path": "Main.lean"})
    assert seen["version"] == 2 and seen["changed"] is False  # one version for everyone


def test_scratch_documents_belong_to_their_agent_and_leave_with_it(
    agents: list[Server], project: Path
) -> None:
    first, second = agent(agents), agent(agents)
    for server in (first, second):
        sync(server, 1, project)
        _handle(server, 2, project)
    assert _scratch_documents(first, 3, project) == 2  # one per agent, not one borrowed twice
    assert second.close()[0] == 0
    until(lambda: _scratch_documents(first, 4, project) == 1, "the second agent's scratch to go")


def test_dropping_a_shared_workspace_releases_only_the_callers_share(
    agents: list[Server], project: Path
) -> None:
    first, second = agent(agents), agent(agents)
    sync(first, 1, project)
    sync(second, 1, project)
    mine, theirs = _handle(first, 2, project), _handle(second, 2, project)
    [lean] = lean_servers(project)
    dropped = ok(first, 3, "lean_drop_workspace", workspace(project))
    assert dropped == {
        "workspace": {"root": str(project)},
        "dropped": False,
        "invalidated_handles": 1,
        "reason": "inUseByOtherAgents",
        "other_agents": 1,
    }
    assert _refused(first, 4, project, mine)["data"]["reason"] == "workspaceDropped"
    assert _continue(second, 4, project, theirs)["success"] is True
    assert [p.pid for p in lean_servers(project)] == [lean.pid]  # Lean kept running
    assert second.close()[0] == 0
    until(
        lambda: ok(first, 9, "lean_drop_workspace", workspace(project))["dropped"] is True,
        "the last agent's drop to evict the workspace",
    )
    until(lambda: not lean_servers(project), "Lean to stop")


def test_each_agent_keeps_the_scratch_allowance_it_would_have_alone(
    agents: list[Server], project: Path
) -> None:
    three = [agent(agents) for _ in range(3)]
    for server in three:
        sync(server, 1, project)
    for turn in range(2):  # the agents take turns: nobody's scratch document is taken away
        for server in three:
            ran = ok(
                server, 10 + turn, "lean_run_at", {**workspace(project), **GOAL, "text": "skip"}
            )
            assert ran["success"] is True
    stats = ok(three[0], 20, "beam_stats", {})
    [found] = [w for w in stats["workspaces"] if w["root"] == str(project)]
    assert found["lean"]["workers_started"] == 1 + 3  # the file, then one scratch per agent
