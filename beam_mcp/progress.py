"""Progress notifications, the `beam.status` liveness notice and the log-level policy.

One `Reporter` belongs to one `tools/call`. Everything it emits goes through the server's
serialized writer before that request's final response, and nothing is emitted once the
reporter is closed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from beam_mcp.families import LOG_RANK
from beam_mcp.wire import RequestId, notification_message

PROGRESS_HINT = "For detailed live updates, pass tools/call params._meta.progressToken."

# Lean diagnostic severities as MCP log levels (docs/MCP.md, "Progress and logs").
SEVERITY_LEVEL = {"error": "error", "warning": "warning", "information": "info", "hint": "debug"}


class LogPolicy:
    """Answers whether an event at a level may be sent for one request.

    Legacy requests read the connection level at emission time (it may change while a call
    runs); modern requests use their own `_meta` level, and no level means no logs at all.
    """

    def __init__(self, level: Callable[[], str | None]) -> None:
        self._level = level

    def admits(self, event_level: str) -> bool:
        minimum = self._level()
        return minimum is not None and LOG_RANK[event_level] >= LOG_RANK[minimum]


class Reporter:
    def __init__(
        self,
        *,
        request_id: RequestId,
        tool: str,
        token: str | int | None,
        policy: LogPolicy,
        send: Callable[[bytes], None],
        path: str | None = None,
    ) -> None:
        self.request_id = request_id
        self.tool = tool
        self.token = token
        self.path = path
        self._policy = policy
        self._send = send
        self._count = 0
        self._status_sent = False
        self._seen: set[str] = set()
        self.closed = False

    def progress(self, message: str) -> None:
        """Sends one progress update when the call carries a token; counts up from 1."""
        if self.closed or self.token is None:
            return
        self._count += 1
        params = {"progressToken": self.token, "progress": self._count, "message": message}
        self._send(notification_message("notifications/progress", params))

    def log(self, level: str, logger: str, data: Any) -> None:
        if self.closed or not self._policy.admits(level):
            return
        params = {"level": level, "logger": logger, "data": data}
        self._send(notification_message("notifications/message", params))

    def diagnostic(self, item: dict[str, Any]) -> None:
        """Forwards one Lean diagnostic as a `lean.diagnostic` log, once per exact content."""
        from beam_mcp.wire import compact

        key = compact(item)
        if key in self._seen:
            return
        self._seen.add(key)
        level = SEVERITY_LEVEL.get(str(item.get("severity")), "info")
        self.log(level, "lean.diagnostic", item)

    def status(self, state: str = "running", message: str | None = None) -> None:
        """Sends the single `beam.status` notice of this call, unless a token was given."""
        if self._status_sent or self.token is not None:
            return
        self._status_sent = True
        subject = f"{self.tool} on {self.path}" if self.path else self.tool
        data: dict[str, Any] = {
            "requestId": self.request_id,
            "tool": self.tool,
            "state": state,
            "message": message or f"{subject} is still working.",
        }
        if self.path:
            data["path"] = self.path
        data["progressHint"] = PROGRESS_HINT
        self.log("notice", "beam.status", data)

    def close(self) -> None:
        self.closed = True
