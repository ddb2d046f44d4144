"""The fake's scripted snippets (tests/fake_lean/README.md), exact message texts, both profiles."""

from __future__ import annotations

from pathlib import Path

import pytest

from beam_runtime.lsp import messages
from tests.lsp.harness import last_diagnostics, open_and_wait, session

pytestmark = pytest.mark.anyio

S6 = "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  constructor\n  exact hp\n"

CASES = [
    # (name, source, [(severity, message, start, end)], legacy messages)
    ("S1", "def answerA : Nat := 42\n", [], None),
    (
        "S2",
        "theorem foo : 1 + 1 = 2 := by sorry\n",
        [(2, "declaration uses `sorry`", (0, 8), (0, 11))],
        ["declaration uses 'sorry'"],
    ),
    (
        "S3",
        "def x : Nat := foo\n",
        [(1, "Unknown identifier `foo`", (0, 15), (0, 18))],
        ["unknown identifier 'foo'"],
    ),
    (
        "S4",
        "example : True ∧ True := by\n  exact trivial\n",
        [
            (
                1,
                "Type mismatch\n  trivial\nhas type\n  True\nbut is expected to have type\n"
                "  True ∧ True",
                (1, 2),
                (1, 15),
            )
        ],
        ["type mismatch\n  trivial\nhas type\n  True\nbut is expected to have type\n  True ∧ True"],
    ),
    (
        "S5",
        "example : True := by\n  trivial\n  exact trivial\n",
        [(1, "No goals to be solved", (2, 2), (2, 15))],
        ["no goals to be solved"],
    ),
    (
        "S6",
        S6,
        [(1, "unsolved goals\ncase right\np q : Prop\nhp : p\nhq : q\n⊢ q", (0, 52), (1, 0))],
        ["unsolved goals\ncase right\np q : Prop\nhp : p\nhq : q\n⊢ q"],
    ),
    (
        "S7",
        "example (n m : Nat) (h1 : n = m) (h2 : m = 0) : 0 = n := by\n  rw [h1, h2]\n",
        [],
        None,
    ),
    (
        "S8",
        "example : True := sorry\n",
        [(2, "declaration uses `sorry`", (0, 0), (0, 7))],
        ["declaration uses 'sorry'"],
    ),
    (
        "S9",
        "#eval 1 + 1\n#check Nat\n",
        [(3, "2", (0, 0), (0, 5)), (3, "Nat : Type", (1, 0), (1, 6))],
        ["2", "Nat : Type"],
    ),
    (
        "S12",
        "example (n : Nat) : n + 0 = n := by simp?\n",
        [(3, "Try this:\n  [apply] simp only [Nat.add_zero]", (0, 36), (0, 41))],
        ["Try this: simp only [Nat.add_zero]"],
    ),
]


def _shape(diags: list[dict[str, object]]) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    for diag in diags:
        rng = diag["range"]
        assert isinstance(rng, dict)
        out.append(
            (
                diag["severity"],
                diag["message"],
                (rng["start"]["line"], rng["start"]["character"]),
                (rng["end"]["line"], rng["end"]["character"]),
            )
        )
    return out


@pytest.mark.parametrize("name, text, expected, legacy", CASES, ids=[c[0] for c in CASES])
async def test_snippet_current_texts(
    project: Path, name: str, text: str, expected: list[tuple[object, ...]], legacy: object
) -> None:
    uri = (project / f"{name}.lean").as_uri()
    async with session(project) as (client, rec):
        await open_and_wait(client, uri, text)
        diags = last_diagnostics(rec, uri)
        assert _shape(diags) == expected
        for diag in diags:
            assert diag["source"] == "Lean 4"
            assert "fullRange" in diag


@pytest.mark.parametrize(
    "name, text, legacy",
    [(c[0], c[1], c[3]) for c in CASES if c[3]],
    ids=[c[0] for c in CASES if c[3]],
)
async def test_snippet_legacy_texts(project: Path, name: str, text: str, legacy: list[str]) -> None:
    uri = (project / f"{name}.lean").as_uri()
    async with session(project, FAKE_LEAN_PROFILE="v4.2x-legacy") as (client, rec):
        await open_and_wait(client, uri, text)
        assert [d["message"] for d in last_diagnostics(rec, uri)] == legacy


async def test_unsolved_goals_full_range_and_tags(project: Path) -> None:
    uri = (project / "S6.lean").as_uri()
    async with session(project) as (client, rec):
        await open_and_wait(client, uri, S6)
        (diag,) = last_diagnostics(rec, uri)
        assert diag["fullRange"] == {
            "start": {"line": 0, "character": 52},
            "end": {"line": 2, "character": 10},
        }
        assert diag["leanTags"] == [1]


async def test_term_goal_and_try_this_action(project: Path) -> None:
    s8, s12 = (project / "S8.lean").as_uri(), (project / "S12.lean").as_uri()
    async with session(project) as (client, _):
        await open_and_wait(client, s8, "example : True := sorry\n")
        goal = await client.request("$/lean/plainTermGoal", messages.position(s8, 0, 18))
        assert goal == {
            "goal": "⊢ True",
            "range": {"start": {"line": 0, "character": 18}, "end": {"line": 0, "character": 23}},
        }
        await open_and_wait(client, s12, "example (n : Nat) : n + 0 = n := by simp?\n", version=4)
        actions = await client.request(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": s12},
                "range": {
                    "start": {"line": 0, "character": 0},
                    "end": {"line": 0, "character": 41},
                },
                "context": {"diagnostics": []},
            },
        )
        first = actions[0]
        assert first["title"] == "Try this: simp only [Nat.add_zero]"
        assert first["kind"] == "quickfix" and first["isPreferred"] is True
        change = first["edit"]["documentChanges"][0]
        assert change["textDocument"] == {"uri": s12, "version": 4}
        assert change["edits"][0]["newText"] == "simp only [Nat.add_zero]"
