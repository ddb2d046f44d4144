"""The failure a broker operation reports to the MCP caller as a tool error.

Tool errors are not JSON-RPC errors: they carry a stable ``code`` from tools.md, a message and
optional structured ``data``. Process-level problems (a missing ``lake``) arrive as ``BeamError``
from the runtime layer and are wrapped into ``runtimeSetup`` here.
"""

from __future__ import annotations

from typing import Any

from beam_mcp.errors import ToolError
from beam_runtime.errors import BeamError


class BrokerError(ToolError):
    """A tool error raised inside the broker; the MCP server reports it as it stands."""

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
) -> BrokerError:
    """Decision 20: set-up failures carry ``{category, fix, detail, stderr_tail?}``."""
    data: dict[str, Any] = {"category": category, "fix": fix, "detail": detail or message}
    if stderr_tail:
        data["stderr_tail"] = stderr_tail
    return BrokerError("runtimeSetup", message, data)


def from_beam_error(error: BeamError, stderr_tail: list[str] | None = None) -> BrokerError:
    detail = error.message
    if error.details:
        detail = f"{error.message} ({error.details})"
    return runtime_setup(error.category, error.message, error.fix, detail, stderr_tail)


def timeout(phase: str, waited_ms: int, what: str) -> BrokerError:
    """Decision 32: a bounded wait ran out."""
    return BrokerError(
        "timeout",
        f"{what} did not finish within {waited_ms} ms",
        {"phase": phase, "waited_ms": waited_ms},
    )


def worker_exited(message: str, stderr_tail: list[str] | None = None) -> BrokerError:
    data: dict[str, Any] = {}
    if stderr_tail:
        data["stderr_tail"] = stderr_tail
    return BrokerError("workerExited", message, data or None)
