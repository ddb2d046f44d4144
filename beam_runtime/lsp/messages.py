"""Builders for the params the broker sends (the one implementation of each shape).

``initialize`` goes through lsprotocol. The document notifications are plain dicts: they are
built on every edit, and their shapes are small and fixed. Lean's own extensions
(``dependencyBuildMode``, ``capabilities.lean``, ``waitForDiagnostics``, ``$/lean/plainGoal``)
are plain dicts too: lsprotocol has no types for them and drops their fields.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def _unstructure(value: Any) -> dict[str, Any]:
    from lsprotocol import converters

    result = converters.get_converter().unstructure(value)
    assert isinstance(result, dict)
    return result


def initialize_params(
    root: Path, *, silent: bool = False, incremental: bool = False
) -> dict[str, Any]:
    """``initialize`` params; Lean ignores ``rootUri`` (it uses the process cwd)."""
    from lsprotocol import types

    params = _unstructure(
        types.InitializeParams(
            process_id=os.getpid(),
            root_uri=root.absolute().as_uri(),
            capabilities=types.ClientCapabilities(),
            client_info=types.ClientInfo(name="lean-beam"),
            workspace_folders=[
                types.WorkspaceFolder(uri=root.absolute().as_uri(), name=root.name or "root")
            ],
        )
    )
    lean: dict[str, Any] = {}
    if silent:
        lean["silentDiagnosticSupport"] = True
    if incremental:
        lean["incrementalDiagnosticSupport"] = True
    params["capabilities"]["lean"] = lean
    params["initializationOptions"] = {"hasWidgets": False}
    return params


def did_open(uri: str, version: int, text: str, build_mode: str | None = None) -> dict[str, Any]:
    item = {"uri": uri, "languageId": "lean4", "version": version, "text": text}
    params: dict[str, Any] = {"textDocument": item}
    if build_mode is not None:
        params["dependencyBuildMode"] = build_mode
    return params


def did_change_full(uri: str, version: int, text: str) -> dict[str, Any]:
    return {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{"text": text}],
    }


def did_change(uri: str, version: int, changes: list[dict[str, Any]]) -> dict[str, Any]:
    """``didChange`` with the given content changes (ranged ones in UTF-16 positions)."""
    return {"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}


def did_close(uri: str) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}}


def did_save(uri: str) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}}


def position(uri: str, line: int, character: int) -> dict[str, Any]:
    """``TextDocumentPositionParams`` (character in UTF-16 code units)."""
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def wait_for_diagnostics(uri: str, version: int) -> dict[str, Any]:
    return {"uri": uri, "version": version}
