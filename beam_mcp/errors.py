"""Tool errors: failures reported inside a successful `tools/call` result (`isError: true`).

Every tool error carries `data.fix`, one sentence naming an action an agent can take: the fix a
layer below attached to the error, else the default of its `data.reason`, else the default of its
code (docs/MCP.md, "Results and tool errors").
"""

from __future__ import annotations

from typing import Any

from beam_runtime.broker.fixes import fix_for


class ToolError(Exception):
    """A structured tool error: `structuredContent = {code, message, data}`, `data.fix` set."""

    def __init__(self, code: str, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def content(self) -> dict[str, Any]:
        """The error as a tool result body; what it quotes of the input is bounded (wire)."""
        from beam_mcp.wire import bounded

        data = dict(self.data or {})
        if not data.get("fix"):
            data["fix"] = fix_for(self.code, data)
        body: dict[str, Any] = bounded({"code": self.code, "message": self.message, "data": data})
        return body


def system_tool_error(tool: str, exc: OSError) -> ToolError:
    """An ``OSError`` a tool let escape: ``systemError`` naming the path(s) the system refused
    and the errno, with the fix of that errno (as the command line reports it)."""
    from beam_runtime.errors import system_error

    error = system_error(exc, tool)
    details = dict(error.details or {})
    data = {"category": error.category, "errno": details.get("errno"), "path": details.get("path")}
    if details.get("other_path"):
        data["other_path"] = details["other_path"]
    data["fix"] = error.fix
    return ToolError("systemError", error.message, data)
