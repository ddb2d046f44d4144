"""Read-only questions about a document: navigation, goals, todo, code-action resolve.

Each one first re-reads the file (so the version check compares against what is on disk), then
checks the caller's version and position, and only then asks Lean, bounded by the navigation
limit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from beam_runtime.broker import errors
from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.queries import navigation
from beam_runtime.broker.queries.positions import echo, resolve
from beam_runtime.broker.session.documents import OpenDocument, check_version, workspace
from beam_runtime.broker.session.named import NamedDocument
from beam_runtime.broker.session.reporting import CallReport, Context, Preparing
from beam_runtime.broker.session.session import LeanSession
from beam_runtime.broker.session.text import DocumentText, utf16_len
from beam_runtime.broker.session.waiting import barrier_within
from beam_runtime.lsp import messages

if TYPE_CHECKING:
    from beam_runtime.broker.arguments import (
        CodeActionArgs,
        DocumentArgs,
        GoalsArgs,
        LeanArgs,
        PositionArgs,
        ReferencesArgs,
        TodoArgs,
        WorkspaceSymbolsArgs,
    )


class CheckedDocument:
    """The caller's document under its lock: re-read, synced with Lean, at the caller's version.

    A class rather than an ``asynccontextmanager``: it runs on every document query, and an
    async generator costs a few calls more to start and finish.
    """

    def __init__(self, session: LeanSession, path: str, version: int | None, ctx: Context) -> None:
        self._preparing = Preparing(ctx)
        self._named = NamedDocument(session, path, self._preparing)
        self._version = version
        self._doc: OpenDocument | None = None

    async def __aenter__(self) -> OpenDocument:
        _, doc, _ = await self._named.__aenter__()
        try:
            check_version(doc, self._version)
        except BaseException:
            await self._named.__aexit__()
            raise
        assert self._preparing.report is not None  # told of the file before its lock was taken
        self._preparing.report.attach(doc)
        self._doc = doc
        return doc

    async def __aexit__(self, *exc: object) -> None:
        report = self._preparing.report
        if self._doc is not None and report is not None:
            report.detach(self._doc)
        await self._named.__aexit__()


async def ask(session: LeanSession, method: str, params: Any, wait_ms: int | None = None) -> Any:
    """One question to Lean, bounded by the navigation limit and the caller's ``wait_ms``."""
    limit = session.limits.navigation_s
    if wait_ms is not None:
        limit = min(limit, wait_ms / 1000)
    return await session.request(method, params, phase="navigation", timeout_s=limit)


def _wait(args: LeanArgs) -> int | None:
    return getattr(args, "wait_ms", None)


def _echo(doc: OpenDocument, line: int, character: int) -> dict[str, Any]:
    """What every position result repeats: the version used and the resolved position."""
    return {"version": doc.version, "position": echo(line, character)}


async def _at_position(
    session: LeanSession,
    method: str,
    args: PositionArgs,
    ctx: Context,
    extra: dict[str, Any] | None = None,
) -> tuple[Any, dict[str, Any]]:
    async with CheckedDocument(session, args.path, args.version, ctx) as doc:
        line, character = resolve(doc.text, args)
        params = messages.position(doc.uri, line, character)
        if extra:
            params.update(extra)
        return await ask(session, method, params, _wait(args)), _echo(doc, line, character)


def _merged(session: LeanSession, found: tuple[Any, dict[str, Any]]) -> dict[str, Any]:
    answer, echoed = found
    if isinstance(answer, dict):
        return {**workspace(session), **answer, **echoed}
    return {**workspace(session), "result": answer, **echoed}


def _locations(session: LeanSession, found: tuple[Any, dict[str, Any]]) -> dict[str, Any]:
    answer, echoed = found
    result = navigation.normalize_locations(answer, session.root, session.is_scratch_uri)
    return {**workspace(session), "result": result, **echoed}


async def hover(session: LeanSession, args: PositionArgs, ctx: Context) -> dict[str, Any]:
    return _merged(session, await _at_position(session, "textDocument/hover", args, ctx))


async def signature_help(session: LeanSession, args: PositionArgs, ctx: Context) -> dict[str, Any]:
    answer = await _at_position(session, "textDocument/signatureHelp", args, ctx)
    return _merged(session, answer)


async def definition(session: LeanSession, args: PositionArgs, ctx: Context) -> dict[str, Any]:
    answer = await _at_position(session, "textDocument/definition", args, ctx)
    return _locations(session, answer)


async def references(session: LeanSession, args: ReferencesArgs, ctx: Context) -> dict[str, Any]:
    extra = {"context": {"includeDeclaration": args.include_declaration}}
    answer = await _at_position(session, "textDocument/references", args, ctx, extra)
    return _locations(session, answer)


async def document_symbols(
    session: LeanSession, args: DocumentArgs, ctx: Context
) -> dict[str, Any]:
    async with CheckedDocument(session, args.path, args.version, ctx) as doc:
        params = {"textDocument": {"uri": doc.uri}}
        answer = await ask(session, "textDocument/documentSymbol", params, _wait(args))
        version = doc.version
    result = answer if isinstance(answer, list) else []
    return {**workspace(session), "version": version, "result": result}


async def workspace_symbols(
    session: LeanSession, args: WorkspaceSymbolsArgs, ctx: Context
) -> dict[str, Any]:
    CallReport(ctx, None).preparing()
    answer = await ask(session, "workspace/symbol", {"query": args.query}, _wait(args))
    result = navigation.normalize_workspace_symbols(answer, session.root, session.is_scratch_uri)
    return {**workspace(session), "result": result}


async def goals(session: LeanSession, args: GoalsArgs, ctx: Context) -> dict[str, Any]:
    """``lean_goals``: over RPC when Lean offers it, else from ``plainGoal``."""
    from beam_runtime.broker.queries.goals import after_position
    from beam_runtime.broker.queries.rpc import goals_at

    async with CheckedDocument(session, args.path, args.version, ctx) as doc:
        line, character = resolve(doc.text, args)
        params = messages.position(doc.uri, line, character)
        if args.mode == "after":
            params["position"] = after_position(doc.text, line, character)
        limit = session.limits.navigation_s
        wait_ms = _wait(args)
        if wait_ms is not None:
            limit = min(limit, wait_ms / 1000)
        found = await goals_at(session, doc.uri, params["position"], limit)
        echoed = _echo(doc, line, character)
        display = doc.source.display
    if found is None:
        raise BrokerError(
            "invalidParams",
            f"no tactic state at {line}:{character} ({args.mode})",
            {"reason": "noGoalsAtPosition", "position": params["position"]},
        )
    source, structured = found
    return {
        **workspace(session),
        "path": display,
        **echoed,
        "mode": args.mode,
        "source": source,
        "goals": structured,
    }


async def todo(session: LeanSession, args: TodoArgs, ctx: Context) -> dict[str, Any]:
    from beam_runtime.broker.queries.todo import KINDS, code_action_items, diagnostic_items

    wanted = set(args.kinds) or set(KINDS)
    suggest = args.suggest == "basic"
    async with CheckedDocument(session, args.path, args.version, ctx) as doc:
        text = doc.text
        start, end = _todo_range(text, args)
        wait = _wait(args)
        if not await barrier_within(session, doc, wait):
            raise errors.timeout("barrier", wait or 0, f"checking {doc.source.display}")
        items = diagnostic_items(text, doc.diagnostics, start, end, suggest)
        if "code_action" in wanted:
            rng = {
                "start": {"line": start[0], "character": start[1]},
                "end": {"line": end[0], "character": end[1]},
            }
            in_range = [d for d in doc.diagnostics if _meets(d, start, end)]
            params = {
                "textDocument": {"uri": doc.uri},
                "range": rng,
                "context": {"diagnostics": in_range},
            }
            actions = await ask(session, "textDocument/codeAction", params, _wait(args))
            items.extend(code_action_items(actions, rng["start"], rng["end"]))
        version = doc.version
    chosen = [item for item in items if item["kind"] in wanted]
    span = {
        "start": {"line": start[0], "character": start[1]},
        "end": {"line": end[0], "character": end[1]},
    }
    return {**workspace(session), "version": version, "range": span, "items": chosen}


def _todo_range(text: DocumentText, args: TodoArgs) -> tuple[tuple[int, int], tuple[int, int]]:
    """The range asked for; an omitted end line is the last line, an omitted end character
    the end of the end line."""
    start = (args.start_line, args.start_character)
    lines = text.lines
    end_line = len(lines) - 1 if args.end_line is None else args.end_line
    end_character = args.end_character
    if end_character is None:
        end_character = utf16_len(lines[end_line]) if end_line < len(lines) else 0
    text.check_position(*start)
    text.check_position(end_line, end_character)
    return start, (end_line, end_character)


def _meets(diagnostic: dict[str, Any], start: tuple[int, int], end: tuple[int, int]) -> bool:
    from beam_runtime.broker.session.diagnostics import full_range, overlaps

    return overlaps(full_range(diagnostic), start, end)


async def resolve_code_action(
    session: LeanSession, args: CodeActionArgs, ctx: Context
) -> dict[str, Any]:
    async with CheckedDocument(session, args.path, args.version, ctx) as doc:
        action = dict(args.code_action)
        try:
            answer = await ask(session, "codeAction/resolve", action)
        except BrokerError as error:
            if error.code != "internalError":
                raise
            raise BrokerError(
                "invalidParams",
                f"Lean could not resolve this code action: {error.message}",
                {"reason": "unresolvableCodeAction"},
            ) from None
        version = doc.version
    return {**workspace(session), "version": version, "code_action": answer}
