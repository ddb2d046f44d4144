"""``lean_goals`` over Lean's RPC and over the ``plainGoal`` fallback give the same goals.

Two real servers against the fake: one where ``getInteractiveGoals`` answers, one where the
fake has no RPC (``FAKE_LEAN_RPC=0``, so connect fails and the broker falls back). The fake
prints goals with Lean's layout rules (width 120, nesting 2, let values, anonymous hypotheses,
conv goals); each layout below is asked of both and compared with whitespace runs collapsed
(docs/BROKER.md, "Tools"), and the tricky ones are checked exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.broker.fake import err, fake_server, ok, request_log, rpc_methods, until, workspace
from tests.mcp.helpers import Server

LONG = " → ".join(f"SomeRatherLongTypeName{n} α β" for n in range(8))
LONG_VALUE = " + ".join(f"someFunctionName{n} x" for n in range(12))

# (binders and type, tactics before the line asked about); the goal is read before `skip`.
LAYOUTS: list[tuple[str, list[str]]] = [
    (": True", []),
    ("(p q : Prop) (hp : p) : p", []),
    ("(p q : Prop) (hp : p) (hq : q) : p ∧ q", ["constructor"]),
    ("(p q r : Prop) (hp : p) : p ∧ q ∧ r", ["constructor"]),
    (": True → True", ["intro"]),
    ("(α : Type) [DecidableEq α] (a b : α) : a = a", []),
    ("(n : Nat) : n + 1 > 0", ["fake_hyp _ : n + 1 > 0"]),
    (": True = True", ["fake_conv"]),
    (": True = True", ["fake_case h", "fake_conv"]),
    (": True", ["fake_hyp x : Nat ::= 5"]),
    (": True", ["fake_hyp v : let ty := Nat;\\nid ty ::= let x := 2;\\nid x"]),
    ("(y : Nat) : True", ["fake_hyp h : let x := 1;\\nx = y"]),
    (": True", ["fake_target let ty := Nat;\\nid = id"]),
    (": True", [f"fake_hyp h : {LONG}"]),
    (": True", [f"fake_hyp h : {LONG} → {LONG}"]),
    (": True", [f"fake_target {LONG}"]),
    (": True", [f"fake_hyp f : Nat → Nat ::= {LONG_VALUE}"]),
    (": True", ["fake_hyp h : Γ ⊢ t"]),
    (": True", ["fake_target Γ ⊢ t"]),
    (": True", ["fake_hyp s : S ::= { a := 1, b := 2 }"]),
    (": True", ["fake_hyp x✝ y✝ : Nat"]),
    (": True", [f"fake_hyp _ : {LONG}"]),
    (": True", ["fake_hyp h : ∀ {p : α → Prop} [DecidablePred p], p a → p b"]),
    (": True", ["fake_hyp a b : Nat", "fake_hyp c : Nat", "fake_hyp d : Int"]),
    (": True", ["fake_hyp x : Nat ::= 5", "fake_hyp y : Nat ::= 5"]),
    (": True", [f"fake_hyp h : {LONG}", "fake_conv"]),
    (": True → True → True", ["intro", "intro"]),
]


def _source() -> tuple[str, list[int]]:
    lines: list[str] = []
    asked: list[int] = []
    for signature, tactics in LAYOUTS:
        lines.append(f"example {signature} := by")
        lines.extend(f"  {tactic}" for tactic in tactics)
        asked.append(len(lines))
        lines.extend(["  skip", "  sorry", ""])
    return "\n".join(lines) + "\n", asked


def _collapse(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, list):
        return [_collapse(item) for item in value]
    if isinstance(value, dict):
        return {key: _collapse(item) for key, item in value.items()}
    return value


def _goals(server: Server, root: Path, lines: list[int]) -> list[dict[str, Any]]:
    ws = workspace(root)
    synced = ok(server, 1, "lean_sync", {**ws, "path": "Goals.lean"})
    answers = []
    for number, line in enumerate(lines, start=2):
        args = {"path": "Goals.lean", "version": synced["version"], "line": line, "character": 2}
        answers.append(ok(server, number, "lean_goals", {**ws, **args, "mode": "before"}))
    return answers


def test_rpc_and_plain_goal_agree_on_every_layout(servers: list[Server], project: Path) -> None:
    text, lines = _source()
    (project / "Goals.lean").write_text(text)
    over_rpc = _goals(fake_server(servers), project, lines)
    fallback = _goals(fake_server(servers, FAKE_LEAN_RPC="0"), project, lines)
    assert {answer["source"] for answer in over_rpc} == {"rpc"}
    assert {answer["source"] for answer in fallback} == {"plainGoal"}
    assert len(lines) >= 20
    for index, (rpc, plain) in enumerate(zip(over_rpc, fallback, strict=True)):
        assert rpc["goals"], LAYOUTS[index]
        assert _collapse(rpc["goals"]) == _collapse(plain["goals"]), LAYOUTS[index]
    first = over_rpc[0]
    assert first == {
        "workspace": {"root": str(project)},
        "path": "Goals.lean",
        "version": first["version"],
        "position": {"line": lines[0], "character": 2},
        "mode": "before",
        "source": "rpc",
        "goals": [{"kind": "goal", "hyps": [], "target": "True"}],
    }
    exact = {
        4: [{"kind": "goal", "hyps": [{"names": ["a✝"], "type": "True"}], "target": "True"}],
        6: [
            {
                "kind": "goal",
                "hyps": [{"names": ["n"], "type": "Nat"}, {"names": [], "type": "n + 1 > 0"}],
                "target": "n + 1 > 0",
            }
        ],
        8: [{"userName": "h", "kind": "conv", "hyps": [], "target": "True = True"}],
        9: [
            {
                "kind": "goal",
                "hyps": [{"names": ["x"], "type": "Nat", "value": "5"}],
                "target": "True",
            }
        ],
        10: [
            {
                "kind": "goal",
                "hyps": [
                    {"names": ["v"], "type": "let ty := Nat;\nid ty", "value": "let x := 2;\nid x"}
                ],
                "target": "True",
            }
        ],
        11: [
            {
                "kind": "goal",
                "hyps": [
                    {"names": ["y"], "type": "Nat"},
                    {"names": ["h"], "type": "let x := 1;\nx = y"},
                ],
                "target": "True",
            }
        ],
        19: [
            {
                "kind": "goal",
                "hyps": [{"names": ["s"], "type": "S", "value": "{ a := 1, b := 2 }"}],
                "target": "True",
            }
        ],
    }
    for index, goals in exact.items():
        assert over_rpc[index]["goals"] == goals, LAYOUTS[index]
        assert fallback[index]["goals"] == goals, LAYOUTS[index]
    wrapped = fallback[13]["goals"][0]["hyps"][0]
    assert wrapped["names"] == ["h"] and _collapse(wrapped["type"]) == LONG
    assert "\n" in wrapped["type"]  # Lean broke it; the parser kept the name and the whole type
    assert _collapse(fallback[16]["goals"][0]["hyps"][0]["value"]) == LONG_VALUE
    assert [g.get("userName") for g in over_rpc[2]["goals"]] == ["left", "right"]
    shadowed = over_rpc[26]["goals"][0]["hyps"]
    assert shadowed == [{"names": ["a✝¹", "a✝"], "type": "True"}]
    assert fallback[26]["goals"][0]["hyps"] == shadowed


SIMPLE = "def n : Nat := 1\nexample : True := by\n  skip\n  sorry\n"


def _ask_twice(server: Server, project: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    ws = workspace(project)
    version = ok(server, 1, "lean_sync", {**ws, "path": "Goals.lean"})["version"]
    args = {**ws, "path": "Goals.lean", "version": version, "mode": "before"}
    answers = [ok(server, n, "lean_goals", {**args, "line": 2, "character": 2}) for n in (2, 3)]
    term = err(server, 4, "lean_goals", {**args, "line": 0, "character": 4})
    return answers, term


@pytest.mark.parametrize(
    "env",
    [{"FAKE_LEAN_RPC_ADVERTISE": "0"}, {"FAKE_LEAN_PROFILE": "v4.2x-legacy"}],
    ids=["unadvertised", "legacy-profile"],
)
def test_rpc_is_used_without_the_capability(
    servers: list[Server], project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    """RPC exists in every supported Lean; ``experimental.rpcProvider`` is only newer servers'
    way of saying so, so the broker asks whatever the server advertises."""
    (project / "Goals.lean").write_text(SIMPLE)
    log = tmp_path / "requests.jsonl"
    server = fake_server(servers, FAKE_LEAN_REQUEST_LOG=str(log), **env)
    answers, term = _ask_twice(server, project)
    assert [answer["source"] for answer in answers] == ["rpc", "rpc"]
    assert answers[0]["goals"] == [{"kind": "goal", "hyps": [], "target": "True"}]
    assert term["code"] == "invalidParams" and term["data"]["reason"] == "noGoalsAtPosition"
    calls = [m for m in rpc_methods(log) if m in ("connect", "call")]
    assert calls[:3] == ["connect", "call", "call"]


@pytest.mark.parametrize(
    "env",
    [
        {"FAKE_LEAN_RPC": "0", "FAKE_LEAN_PROFILE": "v4.2x-legacy"},
        {"FAKE_LEAN_RPC": "0"},
        {"FAKE_LEAN_RPC_FAIL": "connect:-32602"},
        {"FAKE_LEAN_RPC_FAIL": "connect:-32603"},
        {"FAKE_LEAN_RPC_FAIL": "call:-32601"},
        {"FAKE_LEAN_RPC_FAIL": "call:-32603"},
        {"FAKE_LEAN_RPC": "nosession"},
    ],
    ids=[
        "no-rpc-legacy",
        "no-rpc",
        "connect-32602",
        "connect-32603",
        "call-32601",
        "call-32603",
        "no-session",
    ],
)
def test_a_server_without_working_rpc_falls_back_once_per_session(
    servers: list[Server], project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    (project / "Goals.lean").write_text(SIMPLE)
    log = tmp_path / "requests.jsonl"
    server = fake_server(servers, FAKE_LEAN_REQUEST_LOG=str(log), **env)
    answers, term = _ask_twice(server, project)
    assert [answer["source"] for answer in answers] == ["plainGoal", "plainGoal"]
    assert answers[0]["goals"] == [{"kind": "goal", "hyps": [], "target": "True"}]
    assert term["code"] == "invalidParams" and term["data"]["reason"] == "noGoalsAtPosition"
    # learnt on the first question, remembered for the rest of the session
    assert rpc_methods(log).count("connect") == 1
    assert rpc_methods(log).count("call") <= 1
    plain = [e for e in request_log(log) if e.get("request") == "$/lean/plainGoal"]
    assert len(plain) == 3


def _held_refs(log: Path) -> list[int]:
    return [e["held"] for e in request_log(log) if e.get("notification") == "$/lean/rpc/release"]


@pytest.mark.parametrize("wire", ["", "v1"], ids=["p-refs", "rpcref-refs"])
def test_every_reference_of_an_answer_is_released(
    servers: list[Server], project: Path, tmp_path: Path, wire: str
) -> None:
    """Real Lean sends ``{"p": "<n>"}`` references to a client that asked for no wire format
    (the broker asks for none) and ``{"__rpcref": "<n>"}`` in wire format v1; both go back."""
    (project / "Goals.lean").write_text(
        "example (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  constructor\n  all_goals sorry\n"
    )
    log = tmp_path / "requests.jsonl"
    server = fake_server(servers, FAKE_LEAN_REQUEST_LOG=str(log), FAKE_LEAN_RPC_WIRE=wire)
    ws = workspace(project)
    version = ok(server, 1, "lean_sync", {**ws, "path": "Goals.lean"})["version"]
    args = {**ws, "path": "Goals.lean", "version": version, "line": 2, "character": 2}
    answer = ok(server, 2, "lean_goals", {**args, "mode": "before"})
    assert answer["source"] == "rpc" and len(answer["goals"]) == 2
    until(lambda: _held_refs(log), "the release of the answer's references")
    assert _held_refs(log) == [0]
    released = [e for e in request_log(log) if e.get("notification") == "$/lean/rpc/release"]
    assert released[0]["released"] > 5


@pytest.mark.parametrize(
    ("fail", "then"), [("call:-32603", "plainGoal"), ("", "rpc")], ids=["call-fails", "slow"]
)
def test_one_time_bound_for_connect_call_and_fallback(
    servers: list[Server], project: Path, tmp_path: Path, fail: str, then: str
) -> None:
    """Connect and call each take 600 ms (and the call may then fail): the answer, over RPC or
    from the fallback, would come after 1.2 s, past the 1 s the caller gave, so it is a timeout,
    not a late success."""
    (project / "Goals.lean").write_text(SIMPLE)
    log = tmp_path / "requests.jsonl"
    server = fake_server(
        servers,
        FAKE_LEAN_REQUEST_LOG=str(log),
        FAKE_LEAN_RPC_DELAY_MS="600",
        FAKE_LEAN_RPC_FAIL=fail,
    )
    ws = workspace(project)
    version = ok(server, 1, "lean_sync", {**ws, "path": "Goals.lean"})["version"]
    args = {**ws, "path": "Goals.lean", "version": version, "line": 2, "character": 2}
    late = err(server, 2, "lean_goals", {**args, "mode": "before", "wait_ms": 1000})
    assert late["code"] == "timeout", late
    assert late["data"]["waited_ms"] == 1000 and late["data"]["phase"] == "navigation"
    # with the session already connected, the call (and a fallback) fit in the bound
    again = ok(server, 3, "lean_goals", {**args, "mode": "before", "wait_ms": 1000})
    assert again["source"] == then


def test_no_tactic_state_over_rpc_is_invalid_params(servers: list[Server], project: Path) -> None:
    (project / "Goals.lean").write_text("def n : Nat := 1\n")
    server = fake_server(servers)
    ws = workspace(project)
    version = ok(server, 1, "lean_sync", {**ws, "path": "Goals.lean"})["version"]
    args = {**ws, "path": "Goals.lean", "version": version, "line": 0, "character": 4}
    term = err(server, 2, "lean_goals", {**args, "mode": "after"})
    assert term["code"] == "invalidParams" and term["data"]["reason"] == "noGoalsAtPosition"
