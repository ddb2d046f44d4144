"""``lean_try``: many tactics at many positions of one file in one call.

The real document is brought up to date once under its lock and asked for the goals at every
position (each must be inside a proof). Then every (position, tactic) pair runs as a tactic
probe (``speculation.py``) on a scratch document, side by side on as many scratch documents as
the process cap allows: the per-document pool is ignored for the length of the call and trimmed
back afterwards. A ``CapacityLimiter`` of the process cap bounds how many probes are under way;
cancelling the call cancels them all (each cancelled probe's scratch document is closed).

With ``stop_on_first_success`` the first success at a position cancels that position's
outstanding probes; they and the ones not started yet are ``skipped``. Pairs past ``limit`` are
``skipped`` too. ``suggest`` adds the search tactics (``exact?``, ``apply?``, ``simp?``, and
``aesop?`` when the file imports Aesop or Mathlib); their "Try this" texts become
``suggestions``. The answer groups the pairs by outcome and fits the result budget
(``grid.py``); only the handles it names are stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.session.documents import check_version, workspace
from beam_runtime.broker.session.header import imports as header_imports
from beam_runtime.broker.session.paths import SourceFile, resolve_source_async
from beam_runtime.broker.session.reporting import CallReport, Context
from beam_runtime.broker.session.session import LeanSession
from beam_runtime.broker.session.text import DocumentText
from beam_runtime.broker.speculation import freshness, probes
from beam_runtime.broker.speculation.grid import Cell, Grid
from beam_runtime.lsp import messages

if TYPE_CHECKING:
    from beam_runtime.broker.arguments import PositionForm, TryArgs
    from beam_runtime.broker.speculation.handles import HandleRecord
    from beam_runtime.broker.speculation.speculation import Snapshot, Speculation

SEARCH_TACTICS = ("exact?", "apply?", "simp?")
AESOP_SEARCH = "aesop?"
AESOP_PROVIDERS = ("Aesop", "Mathlib")  # header modules that bring `aesop?` into scope
STOPPED = "stopOnFirstSuccess"
LIMITED = "limit"
_TRY_HEAD = re.compile(r"Try th(?:is|ese):")
_ITEM = re.compile(r"^(?:\[apply\]|•)\s*")

Outcome = tuple[dict[str, Any], "HandleRecord | None"]


@dataclass(frozen=True)
class Pair:
    index: int  # input order: position-major, then tactic
    spot: int  # which position
    snap: Snapshot
    tactic: str
    number: int  # which tactic
    search: bool  # one of the suggest tactics


@dataclass
class Trial:
    """The running state of one call: finished outcomes and what stopped each position."""

    stop_on_success: bool
    outcomes: dict[int, Outcome] = field(default_factory=dict)
    stopped: set[int] = field(default_factory=set)
    running: dict[int, set[anyio.CancelScope]] = field(default_factory=dict)
    error: BrokerError | None = None  # the first probe that failed; the call reports it

    def fail(self, error: BrokerError) -> None:
        """A probe failed: keep its error and cancel every other probe of the call."""
        if self.error is None:
            self.error = error
        for scopes in self.running.values():
            for scope in list(scopes):
                scope.cancel()


def resolve_position(text: DocumentText, position: PositionForm) -> tuple[int, int]:
    """(line, character) of one ``positions`` item, in any position form."""
    from beam_runtime.broker.queries.positions import resolve

    return resolve(text, position)


async def run_try(spec: Speculation, session: LeanSession, args: TryArgs, ctx: Context) -> dict:
    source = await resolve_source_async(session.root, args.path)
    report = CallReport(ctx, source.display)
    report.preparing()
    tactics = _tactics(args)
    version, snaps, header = await _snapshots(session, source, args, report)
    tactics += _search_tactics(header) if args.suggest else []
    pairs = [
        Pair(spot * len(tactics) + k, spot, snap, text, k, k >= len(args.tactics))
        for spot, snap in enumerate(snaps)
        for k, text in enumerate(tactics)
    ]
    limit = len(pairs) if args.limit is None else args.limit
    trial = Trial(args.stop_on_first_success)
    try:
        await _run_all(spec, session, trial, pairs[:limit], ctx)
    finally:
        with anyio.CancelScope(shield=True):
            await spec.scratch.trim(session, source, ctx.owner)
    head = {**workspace(session), "path": source.display, "version": version}
    where = [{"line": snap.line, "character": snap.character} for snap in snaps]
    grid = _grid(Grid(head, tactics, where), trial, pairs, limit, args.suggest)
    body, records = grid.answer(spec.answer_bytes)
    for record in records:  # only the handles the answer names are kept
        spec.handles.add(record)
    return body


def _tactics(args: TryArgs) -> list[str]:
    tactics = list(args.tactics)
    if not tactics and not args.suggest:
        raise BrokerError(
            "invalidInput",
            "lean_try needs at least one tactic (or suggest: true)",
            {"reason": "noTactics", "fix": "pass one or more tactic texts in tactics"},
        )
    for index, text in enumerate(tactics):
        if not text.strip():
            raise BrokerError(
                "invalidInput",
                f"tactics[{index}] is blank",
                {"reason": "blankTactic", "index": index, "fix": "remove the blank tactic"},
            )
    return tactics


def _search_tactics(header: str) -> list[str]:
    modules = header_imports(header)
    aesop = any(name.split(".")[0] in AESOP_PROVIDERS for name in modules)
    return [*SEARCH_TACTICS, *([AESOP_SEARCH] if aesop else [])]


async def _snapshots(
    session: LeanSession, source: SourceFile, args: TryArgs, report: CallReport
) -> tuple[int, list[Snapshot], str]:
    """The document's version, one tactic snapshot per position, and the document's header."""
    from beam_runtime.broker.speculation.speculation import Snapshot

    async with session.document_lock(source):
        doc, _ = await session.sync_text(source)
        if args.version is not None:
            check_version(doc, args.version)
        text = doc.text
        points = [resolve_position(text, position) for position in args.positions]
        report.attach(doc)
        try:
            answers = [await _plain_goal(session, doc.uri, *point) for point in points]
        finally:
            report.detach(doc)
        version = doc.version
    snaps = []
    for (line, character), answer in zip(points, answers, strict=True):
        if not isinstance(answer, dict):
            raise _not_in_proof(line, character)
        prefix, column = probes.tactic_prefix(text, line, character)
        snaps.append(Snapshot(source, version, prefix, "tactic", column, line, character))
    return version, snaps, freshness.header_text(text.text)


async def _plain_goal(session: LeanSession, uri: str, line: int, character: int) -> Any:
    return await session.request(
        "$/lean/plainGoal",
        messages.position(uri, line, character),
        phase="probe",
        timeout_s=session.limits.barrier_s,
    )


def _not_in_proof(line: int, character: int) -> BrokerError:
    return BrokerError(
        "invalidParams",
        f"position {line}:{character} is not inside a tactic proof (Lean shows no goals there)",
        {
            "reason": "notInProof",
            "position": {"line": line, "character": character},
            "fix": "give positions inside a `by` block, at the start of a tactic or a sorry",
        },
    )


async def _run_all(
    spec: Speculation, session: LeanSession, trial: Trial, pairs: list[Pair], ctx: Context
) -> None:
    limiter = anyio.CapacityLimiter(max(1, spec.scratch.config.per_process))
    async with anyio.create_task_group() as group:
        for pair in pairs:
            group.start_soon(_run_one, spec, session, trial, pair, limiter, ctx, len(pairs))
    if trial.error is not None:
        raise trial.error


async def _run_one(
    spec: Speculation,
    session: LeanSession,
    trial: Trial,
    pair: Pair,
    limiter: anyio.CapacityLimiter,
    ctx: Context,
    total: int,
) -> None:
    async with limiter:
        if pair.spot in trial.stopped or trial.error is not None:
            return
        running = trial.running.setdefault(pair.spot, set())
        with anyio.CancelScope() as scope:
            running.add(scope)
            try:
                outcome = await spec.probe(
                    session, pair.snap, "", pair.tactic, None, beyond_pool=True, owner=ctx.owner
                )
            except BrokerError as error:  # raised here it would leave as an ExceptionGroup
                trial.fail(error)
                return
            finally:
                running.discard(scope)
            trial.outcomes[pair.index] = outcome
            ctx.progress(f"{ctx.tool}: tried {len(trial.outcomes)} of {total} pairs")
            if trial.stop_on_success and outcome[0]["success"] and not pair.search:
                trial.stopped.add(pair.spot)
                for other in list(running):
                    other.cancel()


def _grid(grid: Grid, trial: Trial, pairs: list[Pair], limit: int, suggest: bool) -> Grid:
    """Every pair into the grid, in input order: its outcome, or why it did not run."""
    grid.suggest = suggest
    for number, pair in enumerate(pairs):
        outcome = trial.outcomes.get(pair.index)
        if outcome is None:
            reason = LIMITED if number >= limit else STOPPED
            grid.add(Cell(pair.spot, pair.number, None, skipped=reason))
            continue
        result, record = outcome
        found = tuple(suggestions_in(result["messages"])) if pair.search else ()
        grid.add(Cell(pair.spot, pair.number, result, record, suggestions=found))
    return grid


def suggestions_in(items: list[dict[str, str]]) -> list[str]:
    """The "Try this" texts of a probe's information messages, in order."""
    found: list[str] = []
    for item in items:
        if item["severity"] == "information":
            found += try_this_texts(item["text"])
    return found


def try_this_texts(message: str) -> list[str]:
    """Suggestions in Lean's "Try this" wording: ``Try this: t`` (older), ``Try this:`` then
    ``  [apply] t`` lines (newer), or ``Try these:`` with one ``[apply]``/``•`` item per line;
    deeper-indented lines continue the item above them."""
    head = _TRY_HEAD.search(message)
    if head is None:
        return []
    rest = message[head.end() :]
    first, _, more = rest.partition("\n")
    if first.strip():
        return [_dedent("\n".join([first.strip(), more]).rstrip())]
    return _items([line for line in more.split("\n") if line.strip()])


def _items(lines: list[str]) -> list[str]:
    items: list[list[str]] = []
    base: int | None = None
    for line in lines:
        indent = len(line) - len(line.lstrip())
        marked = _ITEM.match(line.strip())
        if marked is not None or not items or (base is not None and indent <= base):
            base = indent
            items.append([_ITEM.sub("", line.strip(), count=1)])
        else:
            items[-1].append(line)
    return [_dedent("\n".join(item)) for item in items if item[0]]


def _dedent(text: str) -> str:
    first, *rest = text.split("\n")
    rest = [line for line in rest if line.strip()]
    if not rest:
        return first.strip()
    cut = min(len(line) - len(line.lstrip()) for line in rest)
    return "\n".join([first.strip(), *[line[cut:].rstrip() for line in rest]])
