"""Answers to navigation and goal requests, computed from an elaborated snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.fake_lean import imports
from tests.fake_lean.document import Document, Snapshot
from tests.fake_lean.elab import Env
from tests.fake_lean.library import BUILTINS, KEYWORDS, builtin_type
from tests.fake_lean.model import Decl, Goal
from tests.fake_lean.source import Pos, idents, lsp_range, split_lines

if TYPE_CHECKING:
    from tests.fake_lean.watchdog import Server

SORRY_PROVIDER = "FakeLean.sorryToExactQuestion"


def token_at(snap: Snapshot, pos: Pos) -> tuple[int, int, str] | None:
    if pos.line >= len(snap.lines):
        return None
    for start, end, name in idents(snap.lines[pos.line]):
        if start <= pos.col <= end and name not in KEYWORDS:
            return start, end, name
    return None


def _env_at(snap: Snapshot, line: int) -> Env:
    index = snap.command_index(line)
    env = Env(decls=snap.env.decls, variables=snap.env.variables)
    if 0 <= index < len(snap.results):
        env.namespaces = snap.results[index].namespaces
        env.opens = snap.results[index].opens
    return env


def _locals(snap: Snapshot, line: int) -> dict[str, str]:
    index = snap.command_index(line)
    if 0 <= index < len(snap.results):
        return snap.results[index].locals
    return {}


def _lines_of(server: Server, uri: str) -> list[str]:
    doc = server.docs.get(uri)
    if doc is not None:
        return doc.snap.lines
    path = _path(uri)
    try:
        return split_lines(path.read_text(encoding="utf-8"))
    except OSError:
        return [""]


def _path(uri: str) -> Path:
    from urllib.parse import unquote, urlparse

    return Path(unquote(urlparse(uri).path))


def hover(server: Server, doc: Document, snap: Snapshot, pos: Pos) -> Any:
    token = token_at(snap, pos)
    if token is None:
        return None
    start, end, name = token
    rng = lsp_range(snap.lines, Pos(pos.line, start), Pos(pos.line, end))
    local = _locals(snap, pos.line).get(name)
    if local is not None:
        return _markdown(f"```lean\n{name} : {local}\n```", rng)
    decl = _env_at(snap, pos.line).resolve(name)
    if decl is not None:
        value = f"```lean\n{decl.signature}\n```"
        if decl.doc:
            value += f"\n***\n{decl.doc}"
        if decl.uri != doc.uri:
            module = imports.module_of(server.root, _path(decl.uri))
            value += f"\n***\n*import {module}*"
        return _markdown(value, rng)
    known = builtin_type(name)
    if known:
        return _markdown(f"```lean\n{name} : {known}\n```\n***\n*import Init.Prelude*", rng)
    return None


def _markdown(value: str, rng: dict[str, Any]) -> dict[str, Any]:
    return {"range": rng, "contents": {"kind": "markdown", "value": value}}


def _target(server: Server, snap: Snapshot, pos: Pos) -> tuple[tuple[int, int, str], Decl] | None:
    token = token_at(snap, pos)
    if token is None or token[2] in _locals(snap, pos.line):
        return None
    decl = _env_at(snap, pos.line).resolve(token[2])
    return (token, decl) if decl is not None else None


def definition(server: Server, doc: Document, snap: Snapshot, pos: Pos) -> list[Any]:
    found = _target(server, snap, pos)
    if found is None:
        return []
    return [_link_or_location(server, doc, snap, pos, *found)]


def _link_or_location(
    server: Server, doc: Document, snap: Snapshot, pos: Pos, token: tuple[int, int, str], decl: Decl
) -> dict[str, Any]:
    form = server.settings.definition_form
    lines = _lines_of(server, decl.uri)
    whole = lsp_range(lines, decl.start, decl.end)
    if form == "location" or (form == "auto" and decl.uri != doc.uri):
        return {"uri": decl.uri, "range": whole}
    return {
        "originSelectionRange": lsp_range(
            snap.lines, Pos(pos.line, token[0]), Pos(pos.line, token[1])
        ),
        "targetUri": decl.uri,
        "targetRange": whole,
        "targetSelectionRange": lsp_range(lines, decl.name_start, decl.name_end),
    }


def type_definition(server: Server, doc: Document, snap: Snapshot, pos: Pos) -> list[Any]:
    found = _target(server, snap, pos)
    if found is None:
        return []
    token, decl = found
    type_decl = _env_at(snap, pos.line).resolve(decl.type.split()[0]) if decl.type else None
    if type_decl is None:
        return []
    lines = _lines_of(server, type_decl.uri)
    return [
        {
            "originSelectionRange": lsp_range(
                snap.lines, Pos(pos.line, token[0]), Pos(pos.line, token[1])
            ),
            "targetUri": type_decl.uri,
            "targetRange": lsp_range(lines, type_decl.start, type_decl.end),
            "targetSelectionRange": lsp_range(lines, type_decl.name_start, type_decl.name_end),
        }
    ]


def references(
    server: Server, doc: Document, snap: Snapshot, pos: Pos, include_declaration: bool
) -> list[Any]:
    found = _target(server, snap, pos)
    if found is None:
        return []
    _, decl = found
    names = {decl.name, decl.short}
    out: list[Any] = []
    for other in server.docs.values():
        lines = other.snap.lines
        for number, line in enumerate(lines):
            for start, end, name in idents(line):
                at = Pos(number, start)
                is_decl = other.uri == decl.uri and at == decl.name_start
                if name in names and (include_declaration or not is_decl):
                    out.append({"uri": other.uri, "range": lsp_range(lines, at, Pos(number, end))})
    if include_declaration and decl.uri not in server.docs:
        lines = _lines_of(server, decl.uri)
        out.insert(0, {"uri": decl.uri, "range": lsp_range(lines, decl.name_start, decl.name_end)})
    return out


def highlights(snap: Snapshot, pos: Pos) -> list[Any]:
    token = token_at(snap, pos)
    if token is None:
        return []
    out = []
    for number, line in enumerate(snap.lines):
        for start, end, name in idents(line):
            if name == token[2]:
                out.append(
                    {
                        "range": lsp_range(snap.lines, Pos(number, start), Pos(number, end)),
                        "kind": 1,
                    }
                )
    return out


def document_symbols(snap: Snapshot) -> list[Any]:
    root: list[Any] = []
    stack: list[tuple[dict[str, Any], list[Any]]] = []
    for result in snap.results:
        target = stack[-1][1] if stack else root
        if result.container and result.container[0] == "open":
            cmd = result.command
            name = result.container[1]
            start = Pos(cmd.start, 0)
            node: dict[str, Any] = {
                "name": name,
                "kind": 3,
                "range": lsp_range(snap.lines, start, start),
                "selectionRange": lsp_range(snap.lines, start, start),
                "children": [],
            }
            target.append(node)
            stack.append((node, node["children"]))
        elif result.container and stack:
            node, _ = stack.pop()
            end = Pos(result.command.end, len(snap.lines[result.command.end]))
            node["range"]["end"] = lsp_range(snap.lines, end, end)["end"]
        for decl in result.decls:
            target.append(
                {
                    "name": decl.short,
                    "kind": 6,
                    "range": lsp_range(snap.lines, decl.start, decl.end),
                    "selectionRange": lsp_range(snap.lines, decl.name_start, decl.name_end),
                }
            )
    return root


def workspace_symbols(server: Server, query: str) -> list[Any]:
    if not query:
        return []
    decls: dict[str, Decl] = {}
    for path in _project_files(server.root):
        uri = path.as_uri()
        if uri in server.docs:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        decls.update(imports.collect_decls(server.settings, text, uri))
    for doc in server.docs.values():
        decls.update({k: d for k, d in doc.snap.env.decls.items() if d.uri == doc.uri})
    out = []
    for name, decl in sorted(decls.items()):
        if _fuzzy(query, name):
            lines = _lines_of(server, decl.uri)
            location = {"uri": decl.uri, "range": lsp_range(lines, decl.start, decl.end)}
            out.append({"name": name, "kind": 14, "tags": [], "location": location})
    return out[:100]


def _project_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for path in root.rglob("*.lean"):
        if ".lake" in path.parts or any(part.startswith(".") for part in path.parts[-2:-1]):
            continue
        found.append(path)
        if len(found) >= 500:
            break
    return found


def _fuzzy(query: str, name: str) -> bool:
    position = 0
    lowered = name.lower()
    for char in query.lower():
        position = lowered.find(char, position)
        if position < 0:
            return False
        position += 1
    return True


def signature_help(snap: Snapshot, pos: Pos) -> Any:
    env = _env_at(snap, pos.line)
    line = snap.lines[pos.line][: pos.col] if pos.line < len(snap.lines) else ""
    tokens = idents(line)
    for index in range(len(tokens) - 1, -1, -1):
        decl = env.resolve(tokens[index][2])
        if decl is not None and decl.binders:
            args = line[tokens[index][1] :].split()
            groups = [
                g.strip("(){}[] ")
                for g in decl.binders.replace(")", ")\0").split("\0")
                if g.strip()
            ]
            params = [{"label": group} for group in groups]
            return {
                "signatures": [{"label": decl.signature, "parameters": params}],
                "activeSignature": 0,
                "activeParameter": min(len(args), max(len(params) - 1, 0)),
            }
    return None


def completion(doc: Document, snap: Snapshot, pos: Pos) -> Any:
    line = snap.lines[pos.line][: pos.col] if pos.line < len(snap.lines) else ""
    prefix = idents(line)[-1][2] if idents(line) and line and not line[-1].isspace() else ""
    names = sorted(set(snap.env.decls) | set(BUILTINS))
    items = [
        {
            "label": name,
            "kind": 3,
            "data": {
                "name": name,
                "uri": doc.uri,
                "position": {"line": pos.line, "character": pos.col},
            },
        }
        for name in names
        if name.startswith(prefix)
    ]
    return {"isIncomplete": True, "items": items}


def completion_resolve(item: Any) -> Any:
    name = (item.get("data") or {}).get("name", item.get("label"))
    known = builtin_type(name) if isinstance(name, str) else None
    return {**item, "detail": known or ""}


def goals_at(snap: Snapshot, pos: Pos) -> list[Goal] | None:
    index = snap.command_index(pos.line)
    if index < 0 or index >= len(snap.results):
        return None
    spans = [span for span in snap.results[index].spans if span.start <= pos]
    if not spans:
        return None
    span = spans[-1]
    if pos == span.start or (span.nested and pos < span.end):
        return span.before
    if span.steps and pos < span.end:
        goals = span.before
        for step_start, step_goals in span.steps:
            if step_start < pos:
                goals = step_goals
        return goals
    return span.after


def code_actions(doc: Document, snap: Snapshot, params: Any) -> list[Any]:
    first = int(params["range"]["start"]["line"])
    last = int(params["range"]["end"]["line"])
    out: list[Any] = []
    for result in snap.results:
        for action in result.actions:
            if action.start.line <= last and action.end.line >= first:
                edit = _edit(doc, snap, action.start, action.end, action.new_text)
                item: dict[str, Any] = {"title": action.title, "kind": "quickfix", "edit": edit}
                if not out:
                    item["isPreferred"] = True
                out.append(item)
    index = 0
    for number in range(first, min(last, len(snap.lines) - 1) + 1):
        for start, end, name in idents(snap.lines[number]):
            if name != "sorry":
                continue
            data = {
                "providerName": SORRY_PROVIDER,
                "providerResultIndex": index,
                "params": {
                    "textDocument": {"uri": doc.uri},
                    "range": lsp_range(snap.lines, Pos(number, start), Pos(number, end)),
                },
            }
            out.append({"title": "Replace `sorry` with `exact?`", "kind": "quickfix", "data": data})
            index += 1
    return out


def _edit(doc: Document, snap: Snapshot, start: Pos, end: Pos, text: str) -> dict[str, Any]:
    return {
        "documentChanges": [
            {
                "textDocument": {"uri": doc.uri, "version": snap.version},
                "edits": [{"range": lsp_range(snap.lines, start, end), "newText": text}],
            }
        ]
    }


def resolve_code_action(server: Server, action: Any) -> Any:
    from tests.fake_lean.watchdog import RpcError

    data = action.get("data") if isinstance(action, dict) else None
    params = data.get("params") if isinstance(data, dict) else None
    uri = (
        ((params or {}).get("textDocument") or {}).get("uri") if isinstance(params, dict) else None
    )
    doc = server.docs.get(uri) if isinstance(uri, str) else None
    if not isinstance(data, dict) or data.get("providerName") != SORRY_PROVIDER or doc is None:
        raise RpcError(
            -32602, f"Cannot process request: no resolvable code action data in {action}"
        )
    rng = params["range"]  # type: ignore[index]
    edit = {
        "documentChanges": [
            {
                "textDocument": {"uri": uri, "version": doc.version},
                "edits": [{"range": rng, "newText": "exact?"}],
            }
        ]
    }
    return {**action, "edit": edit}


def semantic_tokens(snap: Snapshot) -> dict[str, Any]:
    data: list[int] = []
    previous_line = 0
    for command in snap.commands:
        word = command.text.split()[0] if command.text.split() else ""
        if word in KEYWORDS:
            data.extend([command.start - previous_line, 0, len(word), 0, 0])
            previous_line = command.start
    return {"data": data}
