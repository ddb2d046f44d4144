"""Typed failures of the LSP client; the broker maps them onto its own tool errors."""

from __future__ import annotations

from typing import Any

REQUEST_CANCELLED = -32800
CONTENT_MODIFIED = -32801
METHOD_NOT_FOUND = -32601
WORKER_EXITED = -32901
WORKER_CRASHED = -32902


class LspError(Exception):
    """Base class of everything the LSP layer raises."""


class FramingError(LspError):
    """The byte stream does not hold well-formed Content-Length frames of JSON objects."""


class ClientStateError(LspError):
    """The call is not allowed in the client's current phase (e.g. before ``initialized``)."""


class ResponseError(LspError):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{method}: error {code}: {message}")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class RequestCancelled(ResponseError):
    """The server reports the request as cancelled (-32800)."""


class ContentModified(ResponseError):
    """The document changed, was closed or its worker was replaced (-32801)."""


class WorkerCrashed(ResponseError):
    """Lean's file worker for the document died (-32901 or -32902)."""


class RequestTimeout(LspError):
    """No answer within the client-side bound; ``$/cancelRequest`` has been sent."""

    def __init__(self, method: str, timeout: float) -> None:
        super().__init__(f"{method}: no response within {timeout:g} s")
        self.method = method
        self.timeout = timeout


class ServerExited(LspError):
    """The server process ended (or its stdout closed) while requests were pending."""

    def __init__(self, returncode: int | None, stderr_tail: list[str]) -> None:
        detail = f"exit code {returncode}" if returncode is not None else "still running"
        super().__init__(f"the language server exited ({detail})")
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class ProtocolViolation(ServerExited):
    """The server wrote something that is not LSP (garbage, a huge Content-Length); it was
    stopped, so this is also an exit, but the message says what it did."""

    def __init__(self, violation: str, returncode: int | None, stderr_tail: list[str]) -> None:
        super().__init__(returncode, stderr_tail)
        self.args = (f"the language server broke the LSP protocol ({violation}); it was stopped",)
        self.violation = violation


def response_error(method: str, error: dict[str, Any]) -> ResponseError:
    code = int(error.get("code", -32603))
    message = str(error.get("message", ""))
    data = error.get("data")
    kind: type[ResponseError] = ResponseError
    if code == REQUEST_CANCELLED:
        kind = RequestCancelled
    elif code == CONTENT_MODIFIED:
        kind = ContentModified
    elif code in (WORKER_EXITED, WORKER_CRASHED):
        kind = WorkerCrashed
    return kind(method, code, message, data)
