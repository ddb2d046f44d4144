"""``Lean.Widget.getInteractiveGoals`` answers turned into structured goals.

An ``InteractiveGoal`` carries ``hyps`` (``names``, ``type``, optional ``val``), the target as
``type``, an optional ``userName`` and its ``goalPrefix`` (``"⊢ "``, or ``"| "`` in conv mode).
Types are ``TaggedText``: ``{"text": s}``, ``{"append": [...]}`` or ``{"tag": [info, inner]}``;
only the text is kept. Lean names an anonymous hypothesis ``[anonymous]``; here it has no names.
The RPC references an answer holds (``{"p": id}`` in wire format v0, which Lean uses for a client
that asks for none, or ``{"__rpcref": id}`` in v1; the id is a string) are collected so the caller
can release them; anything else is never sent back as a reference.
"""

from __future__ import annotations

from typing import Any

ANONYMOUS = "[anonymous]"
_MAX_DEPTH = 200


def flatten(tagged: Any, depth: int = 0) -> str:
    """The plain text of a ``TaggedText`` value (unknown shapes contribute nothing)."""
    if depth > _MAX_DEPTH or not isinstance(tagged, dict):
        return tagged if isinstance(tagged, str) else ""
    if isinstance(tagged.get("text"), str):
        return str(tagged["text"])
    if isinstance(tagged.get("append"), list):
        return "".join(flatten(item, depth + 1) for item in tagged["append"])
    tag = tagged.get("tag")
    if isinstance(tag, list) and len(tag) == 2:
        return flatten(tag[1], depth + 1)
    return ""


def structured_goals(answer: dict[str, Any]) -> list[dict[str, Any]]:
    goals = answer.get("goals")
    if not isinstance(goals, list):
        return []
    return [_goal(item) for item in goals if isinstance(item, dict)]


def _goal(item: dict[str, Any]) -> dict[str, Any]:
    goal: dict[str, Any] = {}
    user_name = item.get("userName")
    if isinstance(user_name, str) and user_name and user_name != ANONYMOUS:
        goal["userName"] = user_name
    prefix = item.get("goalPrefix")
    goal["kind"] = "conv" if isinstance(prefix, str) and prefix.strip() == "|" else "goal"
    hyps = item.get("hyps")
    goal["hyps"] = (
        [_hyp(hyp) for hyp in hyps if isinstance(hyp, dict)] if isinstance(hyps, list) else []
    )
    goal["target"] = flatten(item.get("type")).strip()
    return goal


def _hyp(item: dict[str, Any]) -> dict[str, Any]:
    names = item.get("names")
    listed = (
        [str(name) for name in names if isinstance(name, str)] if isinstance(names, list) else []
    )
    hyp: dict[str, Any] = {"names": [name for name in listed if name != ANONYMOUS]}
    hyp["type"] = flatten(item.get("type")).strip()
    if item.get("val") is not None:
        hyp["value"] = flatten(item.get("val")).strip()
    return hyp


def references(value: Any, found: list[Any] | None = None, depth: int = 0) -> list[Any]:
    """Every RPC reference object inside an answer, in order."""
    found = [] if found is None else found
    if depth > _MAX_DEPTH:
        return found
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get("p", value.get("__rpcref")), str):
            found.append(value)
            return found
        for item in value.values():
            references(item, found, depth + 1)
    elif isinstance(value, list):
        for item in value:
            references(item, found, depth + 1)
    return found
