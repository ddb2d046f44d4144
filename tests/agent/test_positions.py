"""Positions agents get right: line1+match, declaration+sorry, optional version."""

from __future__ import annotations

from pathlib import Path

from tests.broker.fake import err, fake_server, ok, workspace
from tests.mcp.helpers import Server

SOURCE = """namespace Demo

theorem pair (p q : Prop) (hp : p) (hq : q) : p ∧ q := by
  constructor
  · sorry
  · sorry

end Demo

theorem other : 1 + 1 = 2 := by
  sorry

def answer : Nat := 42 -- 𝔽 is two UTF-16 units: Nat
"""


def _server(servers: list[Server], project: Path) -> tuple[Server, dict]:
    (project / "Main.lean").write_text(SOURCE)
    return fake_server(servers), {**workspace(project), "path": "Main.lean"}


def test_line1_and_match_with_an_occurrence(servers: list[Server], project: Path) -> None:
    server, base = _server(servers, project)
    hover = ok(server, 1, "lean_hover", {**base, "line1": 3, "match": "pair"})
    assert hover["position"] == {"line": 2, "character": 8}
    assert hover["version"] >= 1  # omitted version: the one just read from disk, echoed
    second = ok(server, 2, "lean_goals", {**base, "line1": 6, "match": "sorry", "mode": "before"})
    assert second["position"] == {"line": 5, "character": 4}
    # the fourth ':' on line 3 is the one after the binders
    colon = ok(server, 3, "lean_hover", {**base, "line1": 3, "match": ":", "occurrence": 4})
    assert colon["position"] == {"line": 2, "character": SOURCE.splitlines()[2].index(": p ∧")}
    line = SOURCE.splitlines()[12]
    late = ok(server, 4, "lean_hover", {**base, "line1": 13, "match": "Nat", "occurrence": 2})
    assert late["position"] == {"line": 12, "character": line.rindex("Nat") + 1}


def test_declaration_and_sorry(servers: list[Server], project: Path) -> None:
    server, base = _server(servers, project)
    first = ok(
        server, 1, "lean_goals", {**base, "declaration": "Demo.pair", "sorry": 1, "mode": "before"}
    )
    assert first["position"] == {"line": 4, "character": 4}
    second = ok(
        server, 2, "lean_goals", {**base, "declaration": "pair", "sorry": 2, "mode": "before"}
    )
    assert second["position"] == {"line": 5, "character": 4}
    targets = [goal["target"] for goal in first["goals"]]
    assert any("p" in target for target in targets)
    other = ok(
        server, 3, "lean_run_at", {**base, "declaration": "other", "sorry": 1, "text": "rfl"}
    )
    assert other["position"] == {"line": 10, "character": 2} and other["success"] is True


def test_no_match_and_mixed_forms(servers: list[Server], project: Path) -> None:
    server, base = _server(servers, project)
    missing = err(server, 1, "lean_hover", {**base, "line1": 3, "match": "absent"})
    assert missing["code"] == "invalidParams" and missing["data"]["reason"] == "noMatch"
    too_few = err(server, 2, "lean_hover", {**base, "declaration": "other", "sorry": 2})
    assert too_few["data"]["reason"] == "noMatch" and too_few["data"]["found"] == 1
    unknown = err(server, 3, "lean_hover", {**base, "declaration": "nothing", "sorry": 1})
    assert unknown["data"]["reason"] == "noMatch"
    assert "Demo.pair" in unknown["data"]["declarations"]
    both = err(
        server, 4, "lean_hover", {**base, "line": 0, "character": 0, "line1": 1, "match": "n"}
    )
    assert both["code"] == "invalidInput" and both["data"]["reason"] == "positionForm"
    half = err(server, 5, "lean_hover", {**base, "line": 0})
    assert half["code"] == "invalidInput" and half["data"]["missing"] == "character"
    for reply in (missing, too_few, unknown, both, half):
        assert reply["data"]["fix"]


AMBIGUOUS = """namespace A

theorem foo : True := by
  sorry

end A

namespace B

theorem foo : True := by
  sorry

end B
"""


def test_an_ambiguous_declaration_name_is_refused_not_guessed(
    servers: list[Server], project: Path
) -> None:
    (project / "Two.lean").write_text(AMBIGUOUS)
    server = fake_server(servers)
    base = {**workspace(project), "path": "Two.lean"}
    refused = err(server, 1, "lean_hover", {**base, "declaration": "foo", "sorry": 1})
    assert refused["data"]["reason"] == "noMatch"
    assert refused["data"]["candidates"] == ["A.foo", "B.foo"]
    assert "ambiguous" in refused["message"]
    second = ok(server, 2, "lean_hover", {**base, "declaration": "B.foo", "sorry": 1})
    assert second["position"] == {"line": 10, "character": 2}
