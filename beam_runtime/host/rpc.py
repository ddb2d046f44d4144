"""JSON-RPC 2.0 over ``transport.Frames``: requests, answers, notifications, cancellation.

One ``Endpoint`` per connection, symmetric: either side may send requests and notifications.
``run`` reads until the stream ends and hands incoming requests and notifications to the
callbacks synchronously, in arrival order (a notification sent before an answer is handled
before it). When the stream ends or breaks, every request still waiting fails with
``Disconnected``. A request whose awaiting task is cancelled sends ``$/cancelRequest`` first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import anyio

from beam_runtime.host.protocol import CANCEL
from beam_runtime.host.transport import Frames
from beam_runtime.lsp.errors import FramingError

RequestId = int | str
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REFUSED = -32001  # the host refuses this client (handshake)


class RpcFailure(Exception):
    """An error answer: ``code`` and ``message`` as the other side sent them."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Disconnected(Exception):
    """The connection ended before the answer came."""


class Pending:
    """A request on the wire: its id, and its answer once it came."""

    def __init__(self, endpoint: Endpoint, request_id: int) -> None:
        self.id = request_id
        self._endpoint = endpoint
        self._done = anyio.Event()
        self._result: Any = None
        self._error: Exception | None = None

    def settle(self, result: Any = None, error: Exception | None = None) -> None:
        if not self._done.is_set():
            self._result, self._error = result, error
            self._done.set()

    async def result(self) -> Any:
        """The answer; ``RpcFailure`` or ``Disconnected``; cancelling sends ``$/cancelRequest``."""
        try:
            await self._done.wait()
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                await self._endpoint.notify_quietly(CANCEL, {"id": self.id})
            raise
        finally:
            self._endpoint.forget(self.id)
        if self._error is not None:
            raise self._error
        return self._result


class Endpoint:
    def __init__(
        self,
        frames: Frames,
        on_request: Callable[[RequestId, str, Any], None] | None = None,
        on_notification: Callable[[str, Any], None] | None = None,
    ) -> None:
        self.frames = frames
        self.on_request = on_request
        self.on_notification = on_notification
        self.closed = False
        self.close_reason = ""
        self._next = 0
        self._waiting: dict[int, Pending] = {}

    async def begin(self, method: str, params: Any) -> Pending:
        """Sends a request; await ``.result()`` of what comes back."""
        if self.closed:
            raise Disconnected(self.close_reason or "the connection is closed")
        self._next += 1
        pending = Pending(self, self._next)
        self._waiting[pending.id] = pending
        message = {"jsonrpc": "2.0", "id": pending.id, "method": method, "params": params}
        try:
            await self.frames.send(message)
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as error:
            self.forget(pending.id)
            self._close(f"the connection broke: {error!r}")
            raise Disconnected(self.close_reason) from None
        return pending

    async def request(self, method: str, params: Any) -> Any:
        return await (await self.begin(method, params)).result()

    def forget(self, request_id: int) -> None:
        self._waiting.pop(request_id, None)

    async def notify(self, method: str, params: Any) -> None:
        await self.frames.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def notify_quietly(self, method: str, params: Any) -> None:
        """A notification that may be lost when the connection is gone."""
        with contextlib.suppress(Exception):
            await self.notify(method, params)

    async def respond(self, request_id: RequestId, result: Any) -> None:
        with contextlib.suppress(Exception):
            await self.frames.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def fail(self, request_id: RequestId, code: int, message: str) -> None:
        error = {"code": code, "message": message}
        with contextlib.suppress(Exception):
            await self.frames.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    async def run(self) -> None:
        """Reads until the stream ends; then every waiting request fails with ``Disconnected``."""
        reason = "the other side closed the connection"
        try:
            while (message := await self.frames.receive()) is not None:
                self._dispatch(message)
        except FramingError as error:
            reason = f"the connection broke the framing: {error}"
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as error:
            reason = f"the connection broke: {error!r}"
        finally:
            self._close(reason)

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                if self.on_request is not None:
                    self.on_request(message["id"], method, message.get("params"))
            elif self.on_notification is not None:
                self.on_notification(method, message.get("params"))
            return
        pending = self._waiting.get(message.get("id"))  # type: ignore[arg-type]
        if pending is None:
            return  # an answer nobody waits for any more (cancelled)
        error = message.get("error")
        if isinstance(error, dict):
            code, text = error.get("code"), error.get("message")
            pending.settle(error=RpcFailure(code if type(code) is int else 0, str(text)))
        else:
            pending.settle(message.get("result"))

    def _close(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.close_reason = reason
        for pending in list(self._waiting.values()):
            pending.settle(error=Disconnected(reason))
        self._waiting.clear()

    async def aclose(self) -> None:
        self._close("closed by this side")
        await self.frames.aclose()
