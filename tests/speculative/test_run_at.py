"""lean_run_at end to end: tactic and command probes against the fake Lean server."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.helpers import Server
from tests.speculative.helpers import Probe, fake_server, targets

PROOF = (
    "def answerA : Nat := 42\n"
    "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
    "  constructor\n"
    "  exact hp\n"
    "example (n : Nat) : n + 0 = n := by\n"
    "  sorry\n"
    "def later : Nat := answerA\n"
)


def probe(servers: list[Server], project: Path, text: str = PROOF) -> Probe:
    (project / "Main.lean").write_text(text)
    return Probe(fake_server(servers), project)


def test_tactic_probe_reports_goals(servers: list[Server], project: Path) -> None:
    p = probe(servers, project)
    result = p.at(2, 2, "constructor")
    assert result["success"] is True and result["messages"] == [] and result["traces"] == []
    assert result["next_handle"] is None
    goals = result["proof_state"]["goals"]
    assert [(g["userName"], g["target"]) for g in goals] == [("left", "p"), ("right", "q")]
    assert goals[0]["hyps"][1] == {"names": ["hp"], "type": "p"}
    assert result["workspace"] == p.ws["workspace"]


def test_probe_that_closes_the_proof(servers: list[Server], project: Path) -> None:
    p = probe(servers, project)
    result = p.at(2, 2, "constructor\nexact hp\nexact hq")
    assert result["success"] is True
    assert result["messages"] == []  # the closing `done` passed: nothing of the broker's shows
    assert result["proof_state"] == {"goals": []}
    assert targets(p.at(5, 2, "simp")) == []
    assert targets(p.at(2, 2, "trivial")) == []  # p ∧ q with hp, hq


def test_lean_errors_are_unsuccessful_results(servers: list[Server], project: Path) -> None:
    p = probe(servers, project)
    unknown = p.at(2, 2, "exact foo", tool="lean_run_at_handle")
    assert unknown["success"] is False and unknown["next_handle"] is None
    assert unknown["messages"] == [{"severity": "error", "text": "Unknown identifier `foo`"}]
    assert targets(unknown) == ["p ∧ q"]
    surplus = p.at(2, 2, "constructor\nexact hp\nexact hq\ntrivial")
    assert surplus["success"] is False
    assert [m["text"] for m in surplus["messages"]] == ["No goals to be solved"]
    failed = p.at(5, 2, "constructor")
    assert failed["success"] is False
    assert "constructor" in failed["messages"][0]["text"]


def test_sorry_probe_and_messages_of_the_rest_stay_out(
    servers: list[Server], project: Path
) -> None:
    text = "def bad : Nat := nope\n" + PROOF
    p = probe(servers, project, text)
    result = p.at(3, 2, "sorry")
    assert result["success"] is False and result["reason"] == "usesSorry"
    assert result["messages"] == [] and result["next_handle"] is None
    assert targets(result) == []
    unfinished = p.at(3, 2, "constructor")  # goals left: the closing `done` fails quietly
    assert unfinished["success"] is True and unfinished["messages"] == []
    synced = p.ok(
        "lean_sync", {"path": "Main.lean", "diagnostic_scope": "all", "diagnostics_in_result": True}
    )
    assert synced["version"] == p.version
    assert {item["uri"] for item in synced["diagnostics"]["items"]} == {
        (project / "Main.lean").as_uri()
    }
    assert synced["diagnostics"]["counts"]["error"] == 2  # `nope`, and t's unsolved goals
    p.untouched()


def test_command_probes(servers: list[Server], project: Path) -> None:
    p = probe(servers, project)
    evaluated = p.at(6, 0, "#eval 1 + 1")
    assert evaluated == {
        **p.ws,
        "success": True,
        "version": p.version,
        "position": {"line": 6, "character": 0},
        "messages": [{"severity": "information", "text": "2"}],
        "traces": [],
        "proof_state": None,
        "next_handle": None,
    }
    checked = p.at(6, 10, "#check answerA")
    assert checked["messages"] == [{"severity": "information", "text": "answerA : Nat"}]
    # the command holding the position is not part of the environment the probe sees
    inside = p.at(6, 20, "#check later")
    assert inside["success"] is False
    assert inside["messages"][0]["text"] == "Unknown identifier `later`"
    after = p.at(7, 0, "#check later")
    assert after["success"] is True
    traced = p.at(0, 0, "#fake_trace Meta.synthInstance found Nat")
    assert traced["traces"] == ["[Meta.synthInstance] found Nat"]
    assert traced["messages"] == [] and traced["success"] is True


def test_bad_positions_and_versions(servers: list[Server], project: Path) -> None:
    p = probe(servers, project)
    base = {"path": "Main.lean", "text": "skip"}
    past = p.err("lean_run_at", {**base, "version": p.version, "line": 99, "character": 0})
    assert past["code"] == "invalidParams"
    stale = p.err("lean_run_at", {**base, "version": p.version + 1, "line": 2, "character": 2})
    assert stale["code"] == "contentModified"
    assert stale["data"]["reason"] == "documentVersionMismatch"
    p.untouched()


def test_no_scratch_file_on_disk_and_none_in_navigation(
    servers: list[Server], project: Path
) -> None:
    before = sorted(path.name for path in project.rglob("*"))
    p = probe(servers, project)
    made = p.at(7, 0, "def probeOnlyName : Nat := 7")
    assert made["success"] is True
    symbols = p.ok("lean_workspace_symbols", {"query": "probeOnlyName"})
    assert symbols["result"] == []
    refs = p.ok(
        "lean_references", {"path": "Main.lean", "version": p.version, "line": 0, "character": 4}
    )
    assert all(item["uri"] == (project / "Main.lean").as_uri() for item in refs["result"])
    assert refs["result"]
    after = sorted(path.name for path in project.rglob("*"))
    assert after == sorted({*before, "Main.lean"})


def test_probe_in_a_file_whose_header_fails(servers: list[Server], project: Path) -> None:
    p = probe(servers, project, "import Does.Not.Exist\ndef y : Nat := 1\n")
    result = p.at(2, 0, "#eval 1 + 1")
    assert result["success"] is False
    assert "Does" in result["messages"][0]["text"]
    assert result["messages"][0]["severity"] == "error"


def test_probe_right_after_a_token(servers: list[Server], project: Path) -> None:
    p = probe(servers, project)
    after_tactic = p.at(2, len("  constructor"), "exact hp", tool="lean_run_at_handle")
    assert after_tactic["success"] is True and targets(after_tactic) == ["q"]
    # continuations align with the tactic block, not with the end of `constructor`
    assert targets(p.with_(after_tactic["next_handle"], "exact hq")) == []
    after_by = p.at(4, len("example (n : Nat) : n + 0 = n := by"), "simp")
    assert after_by["success"] is True and targets(after_by) == []
