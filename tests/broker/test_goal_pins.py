"""Goal text as Lean lays it out: what starts a new hypothesis and what does not."""

from __future__ import annotations

from beam_runtime.broker.queries.goals import parse_goal


def test_a_named_argument_inside_brackets_is_not_the_value_separator() -> None:
    goal = parse_goal("h : f (x := 1) = [y | (z := 2)] := rfl\n⊢ True")
    assert goal["hyps"] == [{"names": ["h"], "type": "f (x := 1) = [y | (z := 2)]", "value": "rfl"}]


def test_brackets_closed_before_the_separator_leave_it_found() -> None:
    goal = parse_goal("v : (Fin 3) := ⟨0, (by decide)⟩\n⊢ p")
    assert goal["hyps"] == [{"names": ["v"], "type": "(Fin 3)", "value": "⟨0, (by decide)⟩"}]


def test_lines_inside_the_target_are_never_new_hypotheses() -> None:
    goal = parse_goal("x : Nat\n⊢ ∀ (n : Nat),\nn : Nat\nh : n = n")
    assert goal["hyps"] == [{"names": ["x"], "type": "Nat"}]
    assert goal["target"] == "∀ (n : Nat),\nn : Nat\nh : n = n"
