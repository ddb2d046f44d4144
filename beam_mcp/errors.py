"""Tool errors: failures reported inside a successful `tools/call` result (`isError: true`)."""

from __future__ import annotations

from typing import Any


class ToolError(Exception):
    """A structured tool error: `structuredContent = {code, message, data?}`."""

    def __init__(self, code: str, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def content(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            body["data"] = self.data
        return body
