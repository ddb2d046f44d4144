"""The structured error every lean-beam command reports (decisions.md 12)."""

from __future__ import annotations

from typing import Any


class BeamError(Exception):
    """A failure the user can act on: a stable category, a message and the fix."""

    def __init__(
        self,
        category: str,
        message: str,
        fix: str,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.category = category
        self.message = message
        self.fix = fix
        self.details = details

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "category": self.category,
            "message": self.message,
            "fix": self.fix,
        }
        if self.details is not None:
            body["details"] = self.details
        return {"error": body}

    def to_text(self) -> str:
        return f"error: {self.message}\nfix: {self.fix}"
