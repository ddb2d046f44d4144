"""Request handlers: each waits for the elaboration it needs, then answers from the snapshot."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.fake_lean import navigation, rpc
from tests.fake_lean.document import Document, Snapshot
from tests.fake_lean.model import Goal, render_goals
from tests.fake_lean.source import Pos, from_lsp, lsp_range

if TYPE_CHECKING:
    from tests.fake_lean.watchdog import Pending, Server

Handler = Callable[["Server", "Pending", Any], Any]


def handle(server: Server, pending: Pending, params: Any) -> Any:
    from tests.fake_lean.watchdog import METHOD_NOT_FOUND, RpcError

    handler = HANDLERS.get(pending.method)
    if handler is None:
        raise RpcError(METHOD_NOT_FOUND, f"No request handler found for '{pending.method}'")
    return handler(server, pending, params)


def _at_position(server: Server, pending: Pending, params: Any) -> tuple[Document, Snapshot, Pos]:
    doc = server.document(pending)
    line = int(params["position"]["line"])
    snap = server.wait_for(pending, doc, lambda s: s.header_done and s.elaborated(line))
    return doc, snap, from_lsp(snap.lines, params["position"])


def _whole_file(server: Server, pending: Pending) -> tuple[Document, Snapshot]:
    doc = server.document(pending)
    return doc, server.wait_for(pending, doc, lambda s: s.done)


def _wait_for_diagnostics(server: Server, pending: Pending, params: Any) -> Any:
    doc = server.document(pending)
    version = int(params["version"])
    if server.settings.lose_waits:
        from tests.fake_lean.watchdog import Abandoned

        server.drop(pending)
        raise Abandoned()
    with server.cond:
        while True:
            if pending.answered:
                from tests.fake_lean.watchdog import Abandoned

                raise Abandoned()
            if doc.closed:
                from tests.fake_lean.watchdog import CONTENT_MODIFIED, RpcError

                raise RpcError(
                    CONTENT_MODIFIED, f"The file worker for {doc.uri} has been terminated."
                )
            if doc.crashed is None and doc.version >= version and doc.snap.reported:
                return {}
            server.cond.wait(0.05)


def _hover(server: Server, pending: Pending, params: Any) -> Any:
    doc, snap, pos = _at_position(server, pending, params)
    return None if snap.fatal else navigation.hover(server, doc, snap, pos)


def _definition(server: Server, pending: Pending, params: Any) -> Any:
    doc, snap, pos = _at_position(server, pending, params)
    return [] if snap.fatal else navigation.definition(server, doc, snap, pos)


def _type_definition(server: Server, pending: Pending, params: Any) -> Any:
    doc, snap, pos = _at_position(server, pending, params)
    return [] if snap.fatal else navigation.type_definition(server, doc, snap, pos)


def _references(server: Server, pending: Pending, params: Any) -> Any:
    doc, snap, pos = _at_position(server, pending, params)
    include = bool((params.get("context") or {}).get("includeDeclaration"))
    return [] if snap.fatal else navigation.references(server, doc, snap, pos, include)


def _highlight(server: Server, pending: Pending, params: Any) -> Any:
    _doc, snap, pos = _at_position(server, pending, params)
    return [] if snap.fatal else navigation.highlights(snap, pos)


def _document_symbol(server: Server, pending: Pending, params: Any) -> Any:
    _, snap = _whole_file(server, pending)
    return navigation.document_symbols(snap)


def _workspace_symbol(server: Server, pending: Pending, params: Any) -> Any:
    return navigation.workspace_symbols(server, str(params.get("query", "")))


def _signature_help(server: Server, pending: Pending, params: Any) -> Any:
    _doc, snap, pos = _at_position(server, pending, params)
    return None if snap.fatal else navigation.signature_help(snap, pos)


def _completion(server: Server, pending: Pending, params: Any) -> Any:
    doc, snap, pos = _at_position(server, pending, params)
    return navigation.completion(doc, snap, pos)


def _completion_resolve(server: Server, pending: Pending, params: Any) -> Any:
    return navigation.completion_resolve(params)


def goals_for(server: Server, pending: Pending, params: Any) -> list[Goal] | None:
    """The goals at ``params.position`` once elaborated; shared by plainGoal and RPC."""
    _doc, snap, pos = _at_position(server, pending, params)
    return None if snap.fatal else navigation.goals_at(snap, pos)


def _plain_goal(server: Server, pending: Pending, params: Any) -> Any:
    goals = goals_for(server, pending, params)
    return None if goals is None else render_goals(goals)


def _plain_term_goal(server: Server, pending: Pending, params: Any) -> Any:
    _doc, snap, pos = _at_position(server, pending, params)
    index = snap.command_index(pos.line)
    if snap.fatal or index < 0 or index >= len(snap.results):
        return None
    for start, end, goal in snap.results[index].term_goals:
        if start <= pos <= end:
            return {"goal": goal, "range": lsp_range(snap.lines, start, end)}
    return None


def _code_action(server: Server, pending: Pending, params: Any) -> Any:
    doc = server.document(pending)
    last = int(params["range"]["end"]["line"])
    snap = server.wait_for(pending, doc, lambda s: s.header_done and s.elaborated(last))
    return [] if snap.fatal else navigation.code_actions(doc, snap, params)


def _code_action_resolve(server: Server, pending: Pending, params: Any) -> Any:
    return navigation.resolve_code_action(server, params)


def _folding(server: Server, pending: Pending, params: Any) -> Any:
    _, snap = _whole_file(server, pending)
    return [
        {"startLine": cmd.start, "endLine": cmd.end, "kind": "region"}
        for cmd in snap.commands
        if cmd.end > cmd.start
    ]


def _semantic_tokens(server: Server, pending: Pending, params: Any) -> Any:
    _, snap = _whole_file(server, pending)
    return navigation.semantic_tokens(snap)


def _wait_for_ileans(server: Server, pending: Pending, params: Any) -> Any:
    if pending.uri is not None:
        doc = server.document(pending)
        server.wait_for(pending, doc, lambda s: s.done)
    return {}


def _empty_list(server: Server, pending: Pending, params: Any) -> Any:
    server.document(pending)
    return []


def _state(server: Server, pending: Pending, params: Any) -> Any:
    state = server.state()
    state["cwd"] = os.getcwd()
    state["root"] = str(Path.cwd())
    return state


HANDLERS: dict[str, Handler] = {
    "textDocument/waitForDiagnostics": _wait_for_diagnostics,
    "textDocument/hover": _hover,
    "textDocument/definition": _definition,
    "textDocument/declaration": _definition,
    "textDocument/typeDefinition": _type_definition,
    "textDocument/references": _references,
    "textDocument/documentHighlight": _highlight,
    "textDocument/documentSymbol": _document_symbol,
    "workspace/symbol": _workspace_symbol,
    "textDocument/signatureHelp": _signature_help,
    "textDocument/completion": _completion,
    "completionItem/resolve": _completion_resolve,
    "$/lean/plainGoal": _plain_goal,
    "$/lean/plainTermGoal": _plain_term_goal,
    "$/lean/rpc/connect": rpc.connect,
    "$/lean/rpc/call": rpc.call,
    "textDocument/codeAction": _code_action,
    "codeAction/resolve": _code_action_resolve,
    "textDocument/foldingRange": _folding,
    "textDocument/semanticTokens/full": _semantic_tokens,
    "textDocument/semanticTokens/range": _semantic_tokens,
    "textDocument/inlayHint": _empty_list,
    "textDocument/documentColor": _empty_list,
    "$/lean/waitForILeans": _wait_for_ileans,
    "$/fake/state": _state,
}
