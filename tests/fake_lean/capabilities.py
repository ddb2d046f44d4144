"""What the fake answers to ``initialize`` and the watcher registration it sends afterwards."""

from __future__ import annotations

from typing import Any

from tests.fake_lean import rpc
from tests.fake_lean.config import Settings

TOKEN_TYPES = [
    "keyword",
    "variable",
    "property",
    "function",
    "namespace",
    "type",
    "class",
    "enum",
    "interface",
    "struct",
    "typeParameter",
    "parameter",
    "enumMember",
    "event",
    "method",
    "macro",
    "modifier",
    "comment",
    "string",
    "number",
    "regexp",
    "operator",
    "decorator",
    "leanSorryLike",
]
TOKEN_MODIFIERS = [
    "declaration",
    "definition",
    "readonly",
    "static",
    "deprecated",
    "abstract",
    "async",
    "modification",
    "documentation",
    "defaultLibrary",
]

REGISTER_WATCHER: dict[str, Any] = {
    "id": "register_lean_watcher",
    "method": "client/registerCapability",
    "params": {
        "registrations": [
            {
                "id": "lean_watcher",
                "method": "workspace/didChangeWatchedFiles",
                "registerOptions": {
                    "watchers": [{"globPattern": "**/*.lean"}, {"globPattern": "**/*.ilean"}]
                },
            }
        ]
    },
}


def initialize_result(settings: Settings) -> dict[str, Any]:
    caps: dict[str, Any] = {
        "textDocumentSync": {
            "openClose": True,
            "change": 2,
            "willSave": False,
            "willSaveWaitUntil": False,
            "save": {"includeText": True},
        },
        "completionProvider": {"triggerCharacters": ["."], "resolveProvider": True},
        "hoverProvider": True,
        "documentHighlightProvider": True,
        "documentSymbolProvider": True,
        "definitionProvider": True,
        "declarationProvider": True,
        "typeDefinitionProvider": True,
        "referencesProvider": True,
        "callHierarchyProvider": True,
        "renameProvider": {"prepareProvider": True},
        "workspaceSymbolProvider": True,
        "foldingRangeProvider": True,
        "semanticTokensProvider": {
            "legend": {"tokenTypes": TOKEN_TYPES, "tokenModifiers": TOKEN_MODIFIERS},
            "full": True,
            "range": True,
        },
        "codeActionProvider": {
            "resolveProvider": True,
            "codeActionKinds": ["quickfix", "refactor", "source.organizeImports"],
        },
        "inlayHintProvider": {"resolveProvider": False},
    }
    if not settings.legacy:
        caps["signatureHelpProvider"] = {"triggerCharacters": [" "]}
        caps["experimental"] = {"moduleHierarchyProvider": {}}
    if rpc.advertised(settings):
        rpc_provider = {"rpcWireFormat": "v1", "highlightMatchesProvider": {}}
        caps.setdefault("experimental", {})["rpcProvider"] = rpc_provider
    return {"capabilities": caps, "serverInfo": {"name": "Lean 4 Server", "version": "0.3.0"}}
