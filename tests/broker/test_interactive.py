"""``getInteractiveGoals`` answers (``InteractiveGoal``, ``TaggedText``) turned into goals."""

from __future__ import annotations

from beam_runtime.broker.queries.interactive import flatten, references, structured_goals


def tag(ref: str, inner: dict, pos: str = "/0") -> dict:
    return {"tag": [{"info": {"p": ref}, "subexprPos": pos}, inner]}


ANSWER = {
    "goals": [
        {
            "hyps": [
                {
                    "names": ["n", "m"],
                    "fvarIds": ["_uniq.1", "_uniq.2"],
                    "type": tag("1", {"text": "Nat"}),
                    "isInstance": False,
                    "isType": False,
                },
                {
                    "names": ["[anonymous]"],
                    "fvarIds": ["_uniq.3"],
                    "type": {"append": [tag("2", {"text": "n"}), {"text": " + 1 > 0"}]},
                },
                {
                    "names": ["v"],
                    "fvarIds": ["_uniq.4"],
                    "type": {"text": "Nat"},
                    "val": {
                        "append": [{"text": "let x := 2;"}, {"text": "\n"}, tag("3", {"text": "x"})]
                    },
                },
            ],
            "type": {
                "append": [tag("4", {"append": [{"text": "n"}, {"text": " = "}]}), {"text": "m"}]
            },
            "ctx": {"p": "5"},
            "userName": "succ",
            "goalPrefix": "⊢ ",
            "mvarId": "_uniq.9",
        },
        {
            "hyps": [],
            "type": {"text": "True = True"},
            "ctx": {"__rpcref": "6"},
            "goalPrefix": "| ",
            "mvarId": "_uniq.10",
        },
    ]
}


def test_interactive_goals_flatten_to_the_lean_goals_shape() -> None:
    assert structured_goals(ANSWER) == [
        {
            "userName": "succ",
            "kind": "goal",
            "hyps": [
                {"names": ["n", "m"], "type": "Nat"},
                {"names": [], "type": "n + 1 > 0"},
                {"names": ["v"], "type": "Nat", "value": "let x := 2;\nx"},
            ],
            "target": "n = m",
        },
        {"kind": "conv", "hyps": [], "target": "True = True"},
    ]
    assert structured_goals({"goals": []}) == []


def test_references_are_collected_for_release() -> None:
    refs = references(ANSWER)
    assert [next(iter(ref.values())) for ref in refs] == ["1", "2", "3", "4", "5", "6"]


def test_only_string_references_are_released() -> None:
    """A one-key object whose value is not a string id is data, never sent back as a ref."""
    answer = {
        "a": {"p": 7},
        "b": {"__rpcref": {"p": "8"}},
        "c": [{"p": None}, {"__rpcref": "9"}, {"p": "10", "q": 1}],
    }
    assert references(answer) == [{"p": "8"}, {"__rpcref": "9"}]


def test_flatten_ignores_unknown_shapes() -> None:
    assert flatten({"text": "a"}) == "a"
    assert flatten({"weird": 1}) == ""
    assert flatten(None) == ""
    assert flatten({"tag": [{}]}) == ""
