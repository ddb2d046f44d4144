"""The failure a broker operation reports: a stable code, a message and structured data.

The codes are the tool error codes of docs/MCP.md; the MCP layer turns a ``BrokerError`` into a tool
error in one place and adds nothing to it. Process-level problems (a missing ``lake``) arrive as
``BeamError`` from the runtime layer and are wrapped into ``runtimeSetup`` here.
"""

from __future__ import annotations

import json
from typing import Any

from beam_runtime.errors import BeamError


class BrokerError(Exception):
    """A failed broker operation: ``code`` (a tool error code), ``message`` and ``data``."""

    def __init__(self, code: str, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"BrokerError({self.code!r}, {self.message!r})"


def invalid_input(message: str, reason: str, **extra: Any) -> BrokerError:
    return BrokerError("invalidInput", message, {"reason": reason, **extra})


def runtime_setup(
    category: str,
    message: str,
    fix: str,
    detail: str | None = None,
    stderr_tail: list[str] | None = None,
    violation: str | None = None,
) -> BrokerError:
    """Set-up failures carry ``{category, fix, detail, stderr_tail?}``; a server
    stopped for breaking LSP also carries ``reason: protocolViolation`` and ``violation``."""
    data: dict[str, Any] = {"category": category, "fix": fix, "detail": detail or message}
    if violation is not None:
        data.update(reason="protocolViolation", violation=violation)
    if stderr_tail:
        data["stderr_tail"] = stderr_tail
    return BrokerError("runtimeSetup", message, data)


def from_beam_error(error: BeamError, stderr_tail: list[str] | None = None) -> BrokerError:
    detail = error.message
    if error.details:
        detail = f"{error.message} ({details_text(error.details)})"
    return runtime_setup(error.category, error.message, error.fix, detail, stderr_tail)


def details_text(details: Any) -> str:
    """Structured details as plain text for ``detail`` (``searched: /a, /b``), never a repr."""
    if not isinstance(details, dict):
        return details if isinstance(details, str) else json.dumps(details, ensure_ascii=False)
    return "; ".join(f"{key}: {_value_text(value)}" for key, value in details.items())


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return ", ".join(value)
    return json.dumps(value, ensure_ascii=False)


def timeout(phase: str, waited_ms: int, what: str) -> BrokerError:
    """A bounded wait ran out; Lean's work goes on, so call again."""
    return BrokerError(
        "timeout",
        f"{what} did not finish within {waited_ms} ms",
        {"phase": phase, "waited_ms": waited_ms, "retry_after_ms": retry_after_ms(waited_ms)},
    )


def starting(waited_ms: int) -> BrokerError:
    """The workspace's Lean server is still starting when the call's ``wait_ms`` ran out; the
    start goes on, and the next call joins it."""
    return BrokerError(
        "starting",
        f"the workspace's Lean server is still starting after {waited_ms} ms",
        {
            "phase": "sessionStart",
            "waited_ms": waited_ms,
            "retry_after_ms": retry_after_ms(waited_ms),
        },
    )


def retry_after_ms(waited_ms: int) -> int:
    """When to call again: soon, since the work goes on; never a busy loop on ``wait_ms: 0``."""
    return min(5_000, max(500, waited_ms // 2))


def worker_exited(
    message: str, stderr_tail: list[str] | None = None, violation: str | None = None
) -> BrokerError:
    """Lean (or its worker) is gone; ``violation`` when it was stopped for breaking LSP."""
    data: dict[str, Any] = {}
    if violation is not None:
        data.update(reason="protocolViolation", violation=violation)
    if stderr_tail:
        data["stderr_tail"] = stderr_tail
    return BrokerError("workerExited", message, data or None)
