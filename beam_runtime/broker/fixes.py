"""The fix every failure names: defaults by ``data.reason``, then by code.

One sentence per entry, each an action an agent can take. The MCP layer fills ``data.fix`` from
here when nothing below attached a more specific one; ``lean-beam lean`` prints the same.
"""

from __future__ import annotations

from typing import Any

_RETRY = "retry once; if it fails again, draft a report with beam_feedback_report"
_NEW_HANDLE = "get a fresh handle with lean_run_at_handle and continue from it"

FIX_BY_REASON: dict[str, str] = {
    "positionOutsideDocument": "pass a position inside the file (see line_count and "
    "line_length_utf16), or address it with line1+match",
    "splitsSurrogatePair": "move character by one UTF-16 unit, or address it with line1+match",
    "noMatch": "read the file and pass text that occurs on that line (line1 is 1-based), or "
    "use line+character",
    "noGoalsAtPosition": "pick a position inside a tactic block, such as a run_at_position "
    "from lean_todo",
    "fileNotFound": "pass a path that exists, relative to workspace.root or absolute",
    "invalidPath": "pass a non-empty file path",
    "pathEscapesRoot": "pass a path inside workspace.root",
    "notLeanProject": "pass the directory holding lean-toolchain or the lakefile as workspace.root",
    "unreadable": "check the file's permissions, then call again",
    "permissionDenied": "give this user search (x) permission on data.directory, or pass a "
    "file it can reach",
    "unresolvableCodeAction": "pass a code_action exactly as lean_todo returned it for the "
    "current version",
    "handlePathMismatch": "pass the path the handle was made for",
    "handleWorkspaceMismatch": "pass the workspace the handle was made in",
    "unknownHandle": _NEW_HANDLE,
    "released": _NEW_HANDLE,
    "consumed": "continue from the next_handle that lean_run_with_linear returned",
    "sourceChanged": _NEW_HANDLE,
    "sessionRestarted": _NEW_HANDLE,
    "workspaceDropped": _NEW_HANDLE,
    "connectionClosed": _NEW_HANDLE,
    "otherAgent": "use handles your own calls returned; get one with lean_run_at_handle",
    "hostRestarted": _NEW_HANDLE,
    "sourceChangedDuringSave": "call lean_save again once the file stops changing",
    "lean": "call the tool again; Lean answered for an older text",
    "sourceMoving": "call again once the symlink or directory on the path stops changing",
    "timeout": "the file system did not answer in time (a hung NFS or FUSE mount?): check the "
    "mount, then call again",
    "protocolViolation": "something writes non-LSP output to Lean's stdout (a Lake script, a "
    "plugin, a wrapper); run `lake serve` in the project by hand to see what it prints",
}

FIX_BY_CODE: dict[str, str] = {
    "invalidInput": "correct the argument the message names and call again",
    "invalidParams": "correct the argument the message names and call again",
    "contentModified": "call lean_sync on the file and pass the version it returns",
    "timeout": "call again with a larger wait_ms, or a little later; Lean keeps working",
    "starting": "call again after retry_after_ms, or with a larger wait_ms; Lean is still "
    "starting (a first start may build the project's dependencies)",
    "workerExited": "call lean_sync on the file to restart its Lean worker, then retry",
    "requestCancelled": "call again",
    "runtimeSetup": "run `lean-beam doctor` in the project and follow the fix it prints",
    "syncBarrierIncomplete": "rebuild the stale imports (lake build), then lean_refresh the file",
    "saveUnsupportedSetup": "use lean_sync; lean_save needs a Lake project served by lake serve",
    "saveTargetNotModule": "save a file that is a module of the Lake package",
    "internalError": _RETRY,
    "systemError": "fix what data.path and data.errno name (permissions, free space, open-file "
    "limit), then call again",
    "handleNotFound": _NEW_HANDLE,
    "backendRestarted": "call again after retry_after_ms: the next call starts a new Lean host "
    "for the workspace",
    "memoryBudget": "close documents you no longer need (lean_close) and call again after "
    "retry_after_ms; if the machine has memory to spare, raise LEAN_BEAM_MEMORY_BUDGET",
    "workerOutOfMemory": "split the file or simplify the declaration that needs the memory, or "
    "raise --worker-memory-max",
}


def fix_for(code: str, data: dict[str, Any] | None) -> str:
    reason = (data or {}).get("reason")
    if isinstance(reason, str) and reason in FIX_BY_REASON:
        return FIX_BY_REASON[reason]
    return FIX_BY_CODE.get(code, _RETRY)
