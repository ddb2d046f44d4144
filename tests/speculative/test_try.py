"""``lean_try``: tactics × positions in one call, in parallel on scratch documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from beam_runtime.broker.speculation.trying import try_this_texts
from tests.broker.fake import request_log, until
from tests.mcp.helpers import Server, call, structured
from tests.speculative.helpers import HANDLE_ID, Probe, fake_server

PROOF = (
    "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
    "  constructor\n"
    "  exact hp\n"
    "  exact hq\n"
    "theorem u (n : Nat) : n + 0 = n := by\n"
    "  simp\n"
)
A = {"line": 1, "character": 2}  # before `constructor`: ⊢ p ∧ q
B = {"line": 2, "character": 2}  # after it: case left ⊢ p, case right ⊢ q
C = {"line": 5, "character": 2}  # ⊢ n + 0 = n
EIGHT = ["constructor", "exact hp", "exact hq", "trivial", "skip", "assumption", "simp", "norm_num"]
# (success, goals_after, first_goal, same_as) per tactic of EIGHT, at A then at B
AT_A = [
    (True, 2, "p", None),
    (False, 1, "p ∧ q", None),
    (False, 1, "p ∧ q", None),
    (True, 0, None, None),
    (True, 1, "p ∧ q", None),
    (False, 1, "p ∧ q", None),
    (False, 1, "p ∧ q", None),
    (True, 0, None, 3),
]
AT_B = [
    (False, 2, "p", None),
    (True, 1, "q", None),
    (False, 2, "p", None),
    (True, 1, "q", 9),
    (True, 2, "p", None),
    (True, 1, "q", 9),
    (False, 2, "p", None),
    (True, 1, "q", 9),
]


def start(servers: list[Server], project: Path, log: Path, *flags: str, header: str = "") -> Probe:
    (project / "Main.lean").write_text(header + PROOF)
    server = fake_server(servers, *flags, FAKE_LEAN_REQUEST_LOG=str(log))
    return Probe(server, project)


def try_(p: Probe, **args: Any) -> dict:
    result = p.ok("lean_try", {"path": p.path, **args})
    p.untouched()
    return result


def scratch_opens(log: Path) -> tuple[int, set[str]]:
    """Most scratch documents open at one time, by the fake's log, and every one opened."""
    now, most, seen = 0, 0, set()
    for entry in request_log(log):
        uri = entry.get("uri") or ""
        if "beam-scratch" not in uri or "notification" not in entry:
            continue
        if entry["notification"] == "textDocument/didOpen":
            now, most = now + 1, max(most, now + 1)
            seen.add(uri)
        elif entry["notification"] == "textDocument/didClose":
            now -= 1
    return most, seen


def scratch_count(p: Probe) -> int:
    count: int = p.stats()["workspaces"][0]["session"]["scratch_documents"]
    return count


def test_eight_tactics_at_two_positions_run_side_by_side(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    p = start(servers, project, log, "--scratch-per-process", "4")
    result = try_(p, version=p.version, positions=[A, B], tactics=EIGHT)
    assert result["path"] == "Main.lean" and result["version"] == p.version
    assert result["skipped"] == []
    got = result["results"]
    assert [(r["position"], r["tactic"]) for r in got] == [
        (pos, tactic) for pos in (A, B) for tactic in EIGHT
    ]
    for entry, (success, count, first, same_as) in zip(got, AT_A + AT_B, strict=True):
        assert entry["success"] is success, entry
        assert entry["goals_after"] == count, entry
        assert entry.get("first_goal") == first, entry
        assert entry.get("same_as") == same_as, entry
        assert ("error" in entry) is not success, entry
        assert ("handle" in entry) is success, entry
        if success:
            assert HANDLE_ID.match(entry["handle"]["id"])
    assert got[1]["error"].startswith("Type mismatch")
    assert got[14]["error"] == "simp made no progress"
    # A new scratch document is only made while every other one is busy: four open at once
    # means four probes were under way together, beyond the per-document pool of one.
    most, seen = scratch_opens(log)
    assert most == 4 and len(seen) == 4
    assert scratch_count(p) == 1  # trimmed back to the per-document pool after the call
    # A success's handle continues from its state.
    after = p.with_(got[9]["handle"], "exact hq")
    assert after["success"] is True and after["proof_state"] == {"goals": []}


def test_stop_on_first_success_skips_the_rest_of_that_position(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    p = start(servers, project, log)  # default process cap: 2 probes at a time
    slow = "sleep 600000\nskip"
    result = try_(p, positions=[B, A], tactics=["trivial", slow, slow], stop_on_first_success=True)
    # each position stops at its own first success; the second still ran after the first stopped
    assert [(r["position"], r["tactic"], r["success"]) for r in result["results"]] == [
        (B, "trivial", True),
        (A, "trivial", True),
    ]
    reason = "stopOnFirstSuccess"
    assert result["skipped"] == [
        {"position": position, "tactic": slow, "reason": reason} for position in (B, B, A, A)
    ]
    # a slow probe that had started was cancelled: Lean was told, its scratch document closed
    assert any("cancel" in entry for entry in request_log(log))
    closed = [
        entry for entry in request_log(log) if entry.get("notification") == "textDocument/didClose"
    ]
    assert closed and all("beam-scratch" in entry["uri"] for entry in closed)
    assert scratch_count(p) <= 1


def test_limit_skips_the_pairs_past_it(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    p = start(servers, project, tmp_path / "requests.jsonl")
    result = try_(p, positions=[A, B], tactics=["skip", "trivial"], limit=3)
    assert [(r["position"], r["tactic"]) for r in result["results"]] == [
        (A, "skip"),
        (A, "trivial"),
        (B, "skip"),
    ]
    assert result["skipped"] == [{"position": B, "tactic": "trivial", "reason": "limit"}]


def test_suggest_returns_try_this_texts(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    p = start(servers, project, tmp_path / "requests.jsonl")
    result = try_(p, positions=[B, C], tactics=[], suggest=True)
    assert [r["tactic"] for r in result["results"]] == ["exact?", "apply?", "simp?"] * 2
    by_pair = {(r["position"]["line"], r["tactic"]): r for r in result["results"]}
    assert by_pair[(2, "exact?")]["suggestions"] == ["exact hp"]
    assert by_pair[(2, "apply?")]["suggestions"] == ["exact hp"]
    assert by_pair[(2, "simp?")]["success"] is False
    assert by_pair[(2, "simp?")]["suggestions"] == []
    assert by_pair[(5, "simp?")]["suggestions"] == ["simp only [Nat.add_zero]"]
    texts = [(s["position"]["line"], s["text"]) for s in result["suggestions"]]
    assert (2, "exact hp") in texts and (5, "simp only [Nat.add_zero]") in texts
    assert len(texts) == len(set(texts))


def test_suggest_uses_aesop_when_imported(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    p = start(servers, project, tmp_path / "requests.jsonl", header="import Aesop\n")
    later = {"line": 3, "character": 2}  # B, one line down
    result = try_(p, positions=[later], tactics=["exact hp"], suggest=True)
    assert [r["tactic"] for r in result["results"]] == [
        "exact hp",
        "exact?",
        "apply?",
        "simp?",
        "aesop?",
    ]
    assert "suggestions" not in result["results"][0]
    assert result["results"][4]["suggestions"] == ["exact hp"]


def test_legacy_wording_of_try_this(servers: list[Server], project: Path) -> None:
    (project / "Main.lean").write_text(PROOF)
    p = Probe(fake_server(servers, FAKE_LEAN_PROFILE="v4.2x-legacy"), project)
    result = try_(p, positions=[C], tactics=[], suggest=True)
    assert result["results"][2]["suggestions"] == ["simp only [Nat.add_zero]"]


@pytest.mark.parametrize(
    ("message", "texts"),
    [
        ("Try this: exact foo", ["exact foo"]),
        ("Try this:\n  [apply] simp only [Nat.add_zero]", ["simp only [Nat.add_zero]"]),
        ("Try these:\n  [apply] exact a\n  [apply] exact b", ["exact a", "exact b"]),
        ("Try these:\n• simp\n• omega", ["simp", "omega"]),
        (
            "Try this:\n  [apply] constructor\n    · exact a\n    · exact b",
            ["constructor\n· exact a\n· exact b"],
        ),
        ("unsolved goals", []),
    ],
)
def test_try_this_wordings(message: str, texts: list[str]) -> None:
    assert try_this_texts(message) == texts


def test_cancelling_the_call_cancels_its_probes(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    p = start(servers, project, log)
    slow = "sleep 600000\nskip"
    args = {**p.ws, "path": "Main.lean", "positions": [A, B], "tactics": [slow]}
    p.server.send(call(700, "lean_try", args))
    until(lambda: scratch_opens(log)[0] == 2, "two probes to start")
    p.server.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 700}}
    )
    closed = until(
        lambda: [
            e
            for e in request_log(log)
            if e.get("notification") == "textDocument/didClose"
            and "beam-scratch" in (e.get("uri") or "")
        ],
        "the probes' scratch documents to close",
    )
    assert {e["uri"] for e in closed} == scratch_opens(log)[1]
    waits = {
        e["id"]
        for e in request_log(log)
        if e.get("request") == "textDocument/waitForDiagnostics"
        and "beam-scratch" in (e.get("uri") or "")
    }
    assert waits and {e["cancel"] for e in request_log(log) if "cancel" in e} >= waits
    # the server is free for the next call, and the cancelled one is never answered
    p.server.send(call(701, "lean_try", {**args, "tactics": ["skip"]}))
    again, before = p.server.read_until(701)
    assert structured(again)["results"][0]["success"] is True
    assert all(m.get("id") != 700 for m in before + p.server.quiet(0.3))


def test_bad_input_changes_nothing(servers: list[Server], project: Path, tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    p = start(servers, project, log)
    base = {"path": "Main.lean"}
    cases = [
        ({"positions": [], "tactics": ["skip"]}, "invalidInput", None),
        ({"positions": [{"line": "1", "character": 2}], "tactics": ["skip"]}, "invalidInput", None),
        ({"positions": [A], "tactics": []}, "invalidInput", "noTactics"),
        ({"positions": [A], "tactics": ["  "]}, "invalidInput", "blankTactic"),
        ({"positions": [{"line": 99, "character": 0}], "tactics": ["skip"]}, "invalidParams", None),
        (
            {"positions": [A, {"line": 0, "character": 0}], "tactics": ["skip"]},
            "invalidParams",
            "notInProof",
        ),
        (
            {"version": p.version + 1, "positions": [A], "tactics": ["skip"]},
            "contentModified",
            "documentVersionMismatch",
        ),
        ({"positions": [A], "tactics": ["skip"], "limit": 0}, "invalidInput", None),
    ]
    for args, code, reason in cases:
        error = p.err("lean_try", {**base, **args})
        assert error["code"] == code, (args, error)
        if reason is not None:
            assert error["data"]["reason"] == reason, error
            assert error["data"].get("fix") or code == "contentModified", error
    p.untouched()
    assert scratch_opens(log)[1] == set()
