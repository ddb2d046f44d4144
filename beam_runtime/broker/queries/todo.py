"""``lean_todo``: the open work inside a range.

Items come from Lean's diagnostics (``sorry`` warnings, unsynthesized holes, unsolved goals,
anything else) and from ``textDocument/codeAction``. ``sorry`` items are driven by Lean's
warning; the text is consulted only to point at the ``sorry`` tokens of that declaration.
"""

from __future__ import annotations

import re
from typing import Any

from beam_runtime.broker.session import diagnostics as diag
from beam_runtime.broker.session.text import DocumentText

KINDS = ("sorry", "hole", "diagnostic", "code_action", "incomplete_proof")
_SORRY_TOKEN = re.compile(r"(?<![\w.'])sorry(?![\w'])")
_TOP_LEVEL = re.compile(r"^\S")
_SUGGESTION = "exact?"

Position = tuple[int, int]


def diagnostic_kind(item: diag.Diagnostic) -> str:
    if diag.is_sorry_warning(item):
        return "sorry"
    if diag.is_hole(item):
        return "hole"
    if diag.is_unsolved_goals(item):
        return "incomplete_proof"
    return "diagnostic"


def diagnostic_items(
    doc: DocumentText,
    diagnostics: list[diag.Diagnostic],
    start: Position,
    end: Position,
    suggest: bool,
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for item in diagnostics:
        kind = diagnostic_kind(item)
        if kind == "sorry":
            items.extend(_sorry_items(doc, item, start, end, suggest))
            continue
        rng = diag.full_range(item)
        if not diag.overlaps(rng, start, end):
            continue
        at = rng["end"] if kind == "incomplete_proof" else rng["start"]
        entry = _item(kind, rng, at, item)
        if suggest and kind in ("hole", "incomplete_proof"):
            entry["run_at_text"] = _SUGGESTION
        items.append(entry)
    return items


def code_action_items(actions: Any, start: dict[str, int], end: dict[str, int]) -> list[dict]:
    if not isinstance(actions, list):
        return []
    items = []
    for action in actions:
        if not isinstance(action, dict):
            continue
        rng = action_range(action) or {"start": start, "end": end}
        item = {
            "kind": "code_action",
            "range": rng,
            "run_at_position": rng["start"],
            "message": action.get("title", ""),
            "code_action": action,
        }
        items.append(item)
    return items


def action_range(action: dict[str, Any]) -> dict[str, Any] | None:
    """Where a code action acts: its edits, else its diagnostic, else the range in its data.

    A lazy action has no edit before it is resolved; Lean keeps the request's params in
    ``data.params``, which is the best location known for it then.
    """
    ranges = _edit_ranges(action.get("edit"))
    if ranges:
        return {
            "start": min((r["start"] for r in ranges), key=_key),
            "end": max((r["end"] for r in ranges), key=_key),
        }
    attached = action.get("diagnostics")
    if isinstance(attached, list) and attached and isinstance(attached[0], dict):
        return diag.full_range(attached[0])
    data = action.get("data")
    params = data.get("params") if isinstance(data, dict) else None
    found = params.get("range") if isinstance(params, dict) else None
    return found if _is_range(found) else None


def _edit_ranges(edit: Any) -> list[dict[str, Any]]:
    if not isinstance(edit, dict):
        return []
    groups: list[Any] = []
    for change in edit.get("documentChanges") or []:
        if isinstance(change, dict):
            groups.append(change.get("edits") or [])
    changes = edit.get("changes")
    if isinstance(changes, dict):
        groups.extend(changes.values())
    found: list[dict[str, Any]] = []
    for group in groups:
        for text_edit in group if isinstance(group, list) else []:
            rng = text_edit.get("range") if isinstance(text_edit, dict) else None
            if isinstance(rng, dict) and _is_range(rng):
                found.append(rng)
    return found


def _is_range(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("start"), dict)
        and isinstance(value.get("end"), dict)
    )


def _key(position: dict[str, Any]) -> tuple[int, int]:
    return (int(position.get("line", 0)), int(position.get("character", 0)))


def _item(kind: str, rng: dict, at: dict, item: diag.Diagnostic) -> dict[str, Any]:
    return {
        "kind": kind,
        "range": rng,
        "run_at_position": at,
        "message": diag.message_of(item),
        "severity": diag.severity_name(item),
    }


def _sorry_items(
    doc: DocumentText,
    warning: diag.Diagnostic,
    start: Position,
    end: Position,
    suggest: bool,
) -> list[dict[str, Any]]:
    """One item per ``sorry`` token of the declaration the warning names."""
    rng = diag.full_range(warning)
    tokens = _declaration_sorries(doc, rng["start"]["line"])
    if not tokens:
        tokens = [rng]
    items = []
    for token in tokens:
        if not diag.overlaps(token, start, end):
            continue
        entry = _item("sorry", token, token["start"], warning)
        if suggest:
            entry["run_at_text"] = _SUGGESTION
        items.append(entry)
    return items


def _declaration_sorries(doc: DocumentText, first_line: int) -> list[dict[str, Any]]:
    """``sorry`` tokens from the declaration starting near ``first_line`` to the next command."""
    lines = doc.lines
    begin = first_line
    while begin > 0 and not _TOP_LEVEL.match(lines[begin]):
        begin -= 1
    stop = begin + 1
    while stop < len(lines) and not _TOP_LEVEL.match(lines[stop]):
        stop += 1
    tokens = []
    for number in range(begin, stop):
        code = lines[number].split("--", 1)[0]
        for match in _SORRY_TOKEN.finditer(code):
            a = doc.position_of(doc.index_of(number, 0) + match.start())
            b = doc.position_of(doc.index_of(number, 0) + match.end())
            tokens.append({"start": a, "end": b})
    return tokens
