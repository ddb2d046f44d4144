"""``lean_try``'s answer: every pair of a tactics × positions grid, compact enough to fit.

Shape (docs/MCP.md, "lean_try"): each tactic text once (``tactics``, indexed), each distinct
error text once (``errors``, indexed), and per position the tactics grouped by outcome:
``succeeded`` (one group per distinct proof state: goal count, first goal's target and one
handle), ``failed`` (one group per error, or per ``reason`` for a probe that used ``sorry``) and
``skipped`` (one group per reason). Failures carry no goals.

The answer is built to fit the result budget (the MCP layer's ``--result-bytes``, measured the
same way: compact JSON, UTF-8). When the full answer is over it, the broker leaves things out in
this order, each step only if still needed, and says so in ``omitted``: the lines of error texts
after their first (failures then group by that first line), handles (from the last group back),
then the ends of the longest error and goal texts (a common cap). What is left out is counted:
``omitted: {errors, handles, goals}`` (characters of error texts, handles, characters of goal
texts). Pairs are never left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from beam_runtime.broker.speculation.handles import HandleRecord


@dataclass(frozen=True)
class Cell:
    """One pair: its position and tactic (indices) and what came of it."""

    spot: int
    tactic: int
    result: dict[str, Any] | None  # the run result; None: skipped
    record: HandleRecord | None = None  # a success's handle, not yet stored
    skipped: str | None = None  # why it did not run
    suggestions: tuple[str, ...] = ()  # "Try this" texts of a search tactic


@dataclass
class _Form:
    """How much the answer carries; the fitting steps lower it."""

    headlines: bool = False
    handles: int | None = None  # None: every handle
    text_cap: int | None = None  # None: texts whole


class Grid:
    """The pairs of one call, in input order, and the answer made of them."""

    def __init__(self, head: dict[str, Any], tactics: list[str], positions: list[Any]) -> None:
        self.head = head  # workspace, path, version
        self.tactics = tactics
        self.positions = positions
        self.cells: list[Cell] = []
        self.suggest = False

    def add(self, cell: Cell) -> None:
        self.cells.append(cell)

    def answer(self, budget: int) -> tuple[dict[str, Any], list[HandleRecord]]:
        """The answer within ``budget`` bytes (when cutting can get it there) and the handle
        records it names, which the caller stores."""
        form = _Form()
        body, records = self._build(form)
        if _size(body) <= budget:
            return body, records
        form.headlines = True
        body, records = self._build(form)
        if _size(body) > budget:
            form.handles = _largest(len(records), lambda n: self._fits(form, budget, handles=n))
            body, records = self._build(form)
        if _size(body) > budget:
            longest = max((len(text) for text in self._texts()), default=0)
            form.text_cap = _largest(longest, lambda n: self._fits(form, budget, text_cap=n))
            body, records = self._build(form)
        return body, records

    def _fits(self, form: _Form, budget: int, **change: int) -> bool:
        trial = _Form(**{**form.__dict__, **change})
        return _size(self._build(trial)[0]) <= budget

    def _texts(self) -> list[str]:
        out = []
        for cell in self.cells:
            if cell.result is None:
                continue
            goals = _goals(cell.result)
            out.append(_error(cell.result) or "")
            out.append(str(goals[0].get("target", "")) if goals else "")
        return out

    def _build(self, form: _Form) -> tuple[dict[str, Any], list[HandleRecord]]:
        state = _State(form)
        spots: list[dict[str, Any]] = [
            {"position": position, "succeeded": [], "failed": [], "skipped": []}
            | ({"suggestions": []} if self.suggest else {})
            for position in self.positions
        ]
        for cell in self.cells:
            spot = spots[cell.spot]
            if cell.result is None:
                group, new = _join(spot["skipped"], ("skip", cell.skipped), cell)
                if new:
                    group["reason"] = cell.skipped
            elif cell.result["success"]:
                group, new = _join(spot["succeeded"], _state_key(cell), cell)
                if new:
                    group.update(state.success(cell))
                    state.handle(group, cell)
            else:
                kind, value = state.failure_key(cell)
                group, new = _join(spot["failed"], (kind, value), cell)
                if new:
                    group[kind] = value
            if self.suggest:
                _suggest(spot["suggestions"], cell)
        for spot in spots:
            for group in spot["succeeded"] + spot["failed"] + spot["skipped"]:
                del group["_key"]
        body = {**self.head, "tactics": self.tactics, "errors": list(state.errors)}
        body["positions"] = spots
        omitted = {key: value for key, value in state.omitted.items() if value}
        if omitted:
            body["omitted"] = omitted
        return body, state.records


class _State:
    """What one build has gathered: the error table, the handles named, what was left out."""

    def __init__(self, form: _Form) -> None:
        self.form = form
        self.errors: dict[str, int] = {}
        self.records: list[HandleRecord] = []
        self.omitted = {"errors": 0, "handles": 0, "goals": 0}
        self._seen_errors: set[str] = set()

    def success(self, cell: Cell) -> dict[str, Any]:
        goals = _goals(cell.result or {})
        fresh: dict[str, Any] = {"goals_after": len(goals) if goals is not None else None}
        if goals:
            fresh["first_goal"] = self._cut(str(goals[0].get("target", "")), "goals")
        return fresh

    def handle(self, group: dict[str, Any], cell: Cell) -> None:
        if cell.record is None:
            return
        if self.form.handles is not None and len(self.records) >= self.form.handles:
            self.omitted["handles"] += 1
            return
        self.records.append(cell.record)
        group["handle"] = cell.record.to_json()

    def failure_key(self, cell: Cell) -> tuple[str, Any]:
        result = cell.result or {}
        reason = result.get("reason")
        if reason is not None:
            return ("reason", reason)
        return ("error", self._error_number(_error(result) or ""))

    def _error_number(self, full: str) -> int:
        text = full.split("\n", 1)[0] if self.form.headlines else full
        text = self._cut(text, None)
        if full not in self._seen_errors:
            self._seen_errors.add(full)
            self.omitted["errors"] += len(full) - len(text)
        return self.errors.setdefault(text, len(self.errors))

    def _cut(self, text: str, what: str | None) -> str:
        cap = self.form.text_cap
        if cap is None or len(text) <= cap:
            return text
        if what is not None:
            self.omitted[what] += len(text) - cap
        return text[:cap]


def _state_key(cell: Cell) -> tuple[str, str]:
    state = (cell.result or {}).get("proof_state")
    return ("state", json.dumps(state, sort_keys=True, ensure_ascii=False))


def _suggest(seen: list[dict[str, Any]], cell: Cell) -> None:
    for text in cell.suggestions:
        if not any(item["text"] == text for item in seen):
            seen.append({"tactic": cell.tactic, "text": text})


def _join(groups: list[dict[str, Any]], key: Any, cell: Cell) -> tuple[dict[str, Any], bool]:
    """Adds the cell's tactic to the group with ``key``, made if there is none yet; the group and
    whether it is new (the caller then fills it in)."""
    for group in groups:
        if group["_key"] == key:
            group["tactics"].append(cell.tactic)
            return group, False
    group = {"tactics": [cell.tactic], "_key": key}
    groups.append(group)
    return group, True


def _error(result: dict[str, Any]) -> str | None:
    """Lean's first error message of a probe."""
    return next((m["text"] for m in result["messages"] if m["severity"] == "error"), None)


def _goals(result: dict[str, Any]) -> list[dict[str, Any]] | None:
    state = result.get("proof_state")
    goals = state.get("goals") if isinstance(state, dict) else None
    return goals if isinstance(goals, list) else None


def _size(body: dict[str, Any]) -> int:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", "surrogatepass"))


def _largest(high: int, fits: Callable[[int], bool]) -> int:
    """The largest ``n`` in ``[0, high]`` with ``fits(n)`` (0 when none fits), by bisection."""
    low, best = 0, 0
    while low <= high:
        middle = (low + high) // 2
        if fits(middle):
            best, low = middle, middle + 1
        else:
            high = middle - 1
    return best
