"""``$/lean/plainGoal`` and the scripted tactic behaviour speculative execution relies on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from beam_runtime.broker.queries.interactive import references
from beam_runtime.lsp import messages
from tests.lsp.harness import WAIT, last_diagnostics, open_and_wait, session

pytestmark = pytest.mark.anyio

HYPS = "p q : Prop\nhp : p\nhq : q\n"
S6 = "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  constructor\n  exact hp\n"
S7 = "example (n m : Nat) (h1 : n = m) (h2 : m = 0) : 0 = n := by\n  rw [h1, h2]\n"
S7_HYPS = "n m : Nat\nh1 : n = m\nh2 : m = 0\n"


async def _goals(project: Path, text: str, *points: tuple[int, int]) -> list[Any]:
    uri = (project / "G.lean").as_uri()
    async with session(project) as (client, _):
        await open_and_wait(client, uri, text)
        return [
            await client.request("$/lean/plainGoal", messages.position(uri, line, col))
            for line, col in points
        ]


async def test_goals_of_s6(project: Path) -> None:
    before, split = await _goals(project, S6, (1, 2), (2, 2))
    assert before["goals"] == [HYPS + "⊢ p ∧ q"]
    assert split["goals"] == [f"case left\n{HYPS}⊢ p", f"case right\n{HYPS}⊢ q"]
    assert split["rendered"] == (
        f"```lean\ncase left\n{HYPS}⊢ p\n```\n---\n```lean\ncase right\n{HYPS}⊢ q\n```"
    )


async def test_goal_progression_of_s7(project: Path) -> None:
    start, middle, end, outside = await _goals(project, S7, (1, 3), (1, 9), (1, 13), (0, 0))
    assert start["goals"] == [S7_HYPS + "⊢ 0 = n"]
    assert middle["goals"] == [S7_HYPS + "⊢ 0 = m"]
    assert end == {"rendered": "no goals", "goals": []}
    assert outside is None


async def test_goal_on_sorry_of_s2(project: Path) -> None:
    (goal,) = await _goals(project, "theorem foo : 1 + 1 = 2 := by sorry\n", (0, 30))
    assert goal == {"rendered": "```lean\n⊢ 1 + 1 = 2\n```", "goals": ["⊢ 1 + 1 = 2"]}


async def test_no_goals_after_closing_in_s5(project: Path) -> None:
    (goal,) = await _goals(project, "example : True := by\n  trivial\n  exact trivial\n", (2, 2))
    assert goal == {"rendered": "no goals", "goals": []}


async def test_term_mode_position_has_no_goal(project: Path) -> None:
    (goal,) = await _goals(project, "def answerA : Nat := 42\n", (0, 4))
    assert goal is None


TACTICS = [
    ("example (p : Prop) (hp : p) : p ∧ True := by\n  constructor\n  exact hp\n  trivial\n", []),
    ("example (n : Nat) : n + 0 = n := by\n  simp\n", []),
    ("example : 2 + 2 = 4 := by\n  simp\n", []),
    ("example : True := by\n  sorry\n", ["declaration uses `sorry`"]),
    ("example : True := by\n  exact nope\n", ["Unknown identifier `nope`"]),
    ("example : True := by\n  trivial\n  simp\n", ["No goals to be solved"]),
    (
        "example (p q : Prop) (hp : p) : p := by\n  intro\n",
        ["Tactic `intro` failed: no additional binders"],
    ),
    ("example (p q : Prop) (hq : q) : p → q := by\n  intro h\n  exact hq\n", []),
    ("example (n : Nat) : n = n + 1 := by\n  simp\n", ["simp made no progress"]),
    (
        "example (p q : Prop) : p ∧ q := by\n  constructor\n  all_goals sorry\n",
        ["declaration uses `sorry`"],
    ),
    ("example (p : Prop) (hp : p) : p ∧ p := by\n  constructor\n  · exact hp\n  · exact hp\n", []),
]


@pytest.mark.parametrize("text, expected", TACTICS)
async def test_tactic_table(project: Path, text: str, expected: list[str]) -> None:
    uri = (project / "T.lean").as_uri()
    async with session(project) as (client, rec):
        await open_and_wait(client, uri, text)
        assert [d["message"] for d in last_diagnostics(rec, uri)] == expected


async def test_probe_goals_after_constructor(project: Path) -> None:
    text = "example (p q : Prop) : p ∧ q := by\n  constructor\n  all_goals sorry\n"
    (after,) = await _goals(project, text, (1, 13))
    assert after["goals"] == ["case left\np q : Prop\n⊢ p", "case right\np q : Prop\n⊢ q"]


async def _rpc_goals(project: Path, wire: str | None, **env: str) -> tuple[dict, Any]:
    """``initialize`` (asking for ``wire`` or no wire format), then goals over RPC."""
    uri = (project / "R.lean").as_uri()
    async with session(project, initialize=False, **env) as (client, _):
        params = messages.initialize_params(project)
        if wire is not None:
            params["capabilities"]["lean"]["rpcWireFormat"] = wire
        caps = (await client.initialize(params, timeout=WAIT))["capabilities"]
        await open_and_wait(client, uri, S6)
        connected = await client.request("$/lean/rpc/connect", {"uri": uri})
        position = {"line": 2, "character": 2}
        answer = await client.request(
            "$/lean/rpc/call",
            {
                "textDocument": {"uri": uri},
                "position": position,
                "sessionId": connected["sessionId"],
                "method": "Lean.Widget.getInteractiveGoals",
                "params": {"textDocument": {"uri": uri}, "position": position},
            },
        )
        return caps, answer


@pytest.mark.parametrize(("wire", "key"), [(None, "p"), ("v0", "p"), ("v1", "__rpcref")])
async def test_rpc_references_follow_the_wire_format_asked_for(
    project: Path, wire: str | None, key: str
) -> None:
    caps, answer = await _rpc_goals(project, wire)
    assert "rpcProvider" in caps["experimental"]
    refs = references(answer)
    assert len(refs) > 5
    assert all(list(ref) == [key] and isinstance(ref[key], str) for ref in refs), refs


async def test_rpc_answers_without_being_advertised(project: Path) -> None:
    caps, answer = await _rpc_goals(project, None, FAKE_LEAN_RPC_ADVERTISE="0")
    assert "rpcProvider" not in caps.get("experimental", {})
    assert [goal["userName"] for goal in answer["goals"]] == ["left", "right"]
