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
        data = dict(self.data or {})
        if not data.get("fix"):
            data["fix"] = fix_for(self.code, data)
        return {"code": self.code, "message": self.message, "data": data}
