"""A probe that leans on ``sorry`` is not a success (docs/BROKER.md, "Speculative execution").

Lean says "declaration uses `sorry`" once per declaration, on its name, and only when the
declaration has no error. A tactic probe's scratch text ends with a ``done`` line, so a probe that
closes every goal leaves a declaration without errors and Lean's warning shows whether it used
``sorry``; a ``sorry`` or ``admit`` token in the probe text counts too (it fills one goal of many).
"""

from __future__ import annotations

from pathlib import Path

from beam_runtime.broker.results import TryResult
from tests.mcp.helpers import Server
from tests.speculative.helpers import Probe, fake_server, targets
from tests.support.shapes import problems

PROOF = (
    "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
    "  constructor\n"
    "  exact hp\n"
    "  exact hq\n"
    "theorem w (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
    "  constructor\n"
    "  · sorry\n"
    "  exact hq\n"
    "theorem z (p : Prop) (hp : p) : p := by\n"
    "  exact hp\n"
    "def answerA : Nat := 42\n"
)
CHEATS = [
    "sorry",
    "admit",
    "all_goals sorry",
    "constructor\nall_goals sorry",
    "constructor\n· sorry\nexact hq",
    "constructor\n· sorry",  # goals left: Lean is silent, the token tells
    "constructor\nexact hp\nadmit",
    "have h : q := sorry\nexact ⟨hp, h⟩",
    "stop",  # Lean's `repeat sorry`: no sorry token, only Lean's warning tells
]
HONEST = ["trivial", "constructor\nexact hp\nexact hq", "constructor\nexact hp"]


def start(servers: list[Server], project: Path, **env: str) -> Probe:
    (project / "Main.lean").write_text(PROOF)
    return Probe(fake_server(servers, **env), project)


def test_sorry_is_not_a_success(servers: list[Server], project: Path) -> None:
    p = start(servers, project)
    for text in CHEATS:
        result = p.at(1, 2, text, tool="lean_run_at_handle")
        assert result["success"] is False, (text, result)
        assert result["reason"] == "usesSorry", (text, result)
        assert result["next_handle"] is None, text
        assert not [m for m in result["messages"] if m["severity"] == "error"], (text, result)
    for text in HONEST:
        result = p.at(1, 2, text, tool="lean_run_at_handle")
        assert result["success"] is True, (text, result)
        assert "reason" not in result and result["next_handle"] is not None, (text, result)
    assert targets(p.at(1, 2, "constructor\nexact hp")) == ["q"]


def test_legacy_wording_is_caught_too(servers: list[Server], project: Path) -> None:
    p = start(servers, project, FAKE_LEAN_PROFILE="v4.2x-legacy")
    for text in ("stop", "all_goals sorry"):
        result = p.at(1, 2, text)
        assert result["success"] is False and result["reason"] == "usesSorry", (text, result)


def test_an_earlier_sorry_of_the_declaration_does_not_fail_an_honest_probe(
    servers: list[Server], project: Path
) -> None:
    p = start(servers, project)
    honest = p.at(7, 2, "exact hq")  # `w` still says "uses sorry" because of line 6
    assert honest["success"] is True and "reason" not in honest, honest
    assert targets(honest) == []
    cheat = p.at(7, 2, "sorry")
    assert cheat["success"] is False and cheat["reason"] == "usesSorry"
    later = p.at(9, 2, "exact hp")  # the warning of `w`, an earlier declaration, is not `z`'s
    assert later["success"] is True and "reason" not in later, later


def test_command_probe_with_sorry(servers: list[Server], project: Path) -> None:
    p = start(servers, project)
    cheat = p.at(11, 0, "example : True := sorry")
    assert cheat["success"] is False and cheat["reason"] == "usesSorry", cheat
    assert [m["severity"] for m in cheat["messages"]] == ["warning"]
    by_tactic = p.at(11, 0, "theorem v : True ∧ True := by\n  constructor\n  all_goals sorry")
    assert by_tactic["success"] is False and by_tactic["reason"] == "usesSorry", by_tactic
    fine = p.at(11, 0, "example : True := trivial")
    assert fine["success"] is True and "reason" not in fine, fine


def test_a_handle_continued_with_sorry_is_not_a_success(
    servers: list[Server], project: Path
) -> None:
    p = start(servers, project)
    split = p.at(1, 2, "constructor", tool="lean_run_at_handle")
    assert split["success"] is True
    cheat = p.with_(split["next_handle"], "exact hp\nsorry")
    assert cheat["success"] is False and cheat["reason"] == "usesSorry", cheat
    assert cheat["next_handle"] is None
    stop = p.with_(split["next_handle"], "stop")
    assert stop["success"] is False and stop["reason"] == "usesSorry", stop
    done = p.with_(split["next_handle"], "exact hp\nexact hq")
    assert done["success"] is True and targets(done) == []


def test_try_never_counts_sorry_as_a_success(servers: list[Server], project: Path) -> None:
    p = start(servers, project)
    position = {"line": 1, "character": 2}
    tactics = ["sorry", "admit", "all_goals sorry", "stop", "trivial"]
    result = p.ok(
        "lean_try",
        {
            "path": p.path,
            "positions": [position],
            "tactics": tactics,
            "stop_on_first_success": True,
        },
    )
    p.untouched()
    (entry,) = result["positions"]
    assert [(g["tactics"], g["goals_after"]) for g in entry["succeeded"]] == [([4], 0)]
    assert entry["failed"] == [{"tactics": [0, 1, 2, 3], "reason": "usesSorry"}]
    assert entry["skipped"] == [] and result["errors"] == []
    assert problems(result, TryResult) == []
