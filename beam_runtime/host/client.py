"""The agents' side of a host: one connection (``HostClient``), the link that outlives it
(``HostLink``), and the one-question probe that ``beam_stats`` and ``lean-beam host`` use.

A call's progress, status and diagnostics notifications reach the context of the call that
asked (``Context`` of ``beam_runtime/broker/session/reporting.py``), in order and before its
answer; a cancelled call sends ``$/cancelRequest``. When the host dies, every call waiting on
it fails at once with ``backendRestarted`` and the next call starts a new host. Handles are
owned by the host that made them: the link remembers which host generation returned each
handle id, and a handle of a host that has died since answers ``handleNotFound`` here.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import anyio
from anyio.abc import TaskGroup

from beam_runtime.broker.errors import BrokerError
from beam_runtime.host import protocol as p
from beam_runtime.host.config import HostConfig
from beam_runtime.host.place import Unavailable
from beam_runtime.host.rpc import REFUSED, Disconnected, Endpoint, RpcFailure
from beam_runtime.host.start import reach
from beam_runtime.host.transport import Frames, SyncChannel

if TYPE_CHECKING:
    from beam_runtime.broker.session.reporting import Context

RETRY_AFTER_MS = 1_000
T = TypeVar("T")
HANDLES_REMEMBERED = 4096


class HostClient:
    """One agent connection: calls out, their notifications routed back to their contexts."""

    def __init__(self, endpoint: Endpoint, welcome: p.Welcome) -> None:
        self.endpoint = endpoint
        self.welcome = welcome
        self.runtime_active = False  # the host said it has started a Lean session
        self._calls: dict[int, Context] = {}
        endpoint.on_notification = self._notified

    @classmethod
    async def open(cls, config: HostConfig, group: TaskGroup, attempts: int = 3) -> HostClient:
        """A connection that passed the handshake; a host that closes the connection before
        answering (it was exiting just then) is tried again, then a new one started."""
        for attempt in range(attempts):
            try:
                return await cls._open_once(config, group)
            except Disconnected as gone:
                if attempt == attempts - 1:
                    raise Unavailable(
                        "hostDidNotStart", f"the Lean host did not answer: {gone}"
                    ) from None
                await anyio.sleep(0.05)
        raise AssertionError("unreachable")

    @classmethod
    async def _open_once(cls, config: HostConfig, group: TaskGroup) -> HostClient:
        stream = await reach(config)
        endpoint = Endpoint(Frames(stream))
        group.start_soon(endpoint.run)
        hello: p.Hello = {
            "protocol": p.PROTOCOL,
            "runtime_id": config.runtime_id,
            "role": "agent",
            "pid": os.getpid(),
            "root": config.root,
        }
        try:
            welcome = p.check(p.Welcome, await endpoint.request(p.HELLO, hello), "welcome")
        except RpcFailure as failure:
            await endpoint.aclose()
            reason = "hostRefused" if failure.code == REFUSED else "hostProtocol"
            raise Unavailable(reason, f"the Lean host refused this server: {failure}") from None
        except Disconnected:
            await endpoint.aclose()
            raise
        except p.MessageError as error:
            await endpoint.aclose()
            raise Unavailable("hostProtocol", f"the Lean host answered badly: {error}") from None
        return cls(endpoint, welcome)

    @property
    def alive(self) -> bool:
        return not self.endpoint.closed

    @property
    def pid(self) -> int:
        return self.welcome["pid"]

    async def call(
        self, tool: str, root: str, arguments: dict[str, Any], ctx: Context
    ) -> dict[str, Any]:
        """The tool's result; ``BrokerError`` for a tool error, ``Disconnected`` if the host
        went away before answering."""
        params: p.CallParams = {"tool": tool, "root": root, "arguments": arguments}
        pending = await self.endpoint.begin(p.CALL, params)
        self._calls[pending.id] = ctx
        try:
            answer = await pending.result()
        finally:
            self._calls.pop(pending.id, None)
        try:
            outcome: p.CallOutcome = p.check(p.CallOutcome, answer, "outcome")
        except p.MessageError as error:
            raise BrokerError("internalError", f"the Lean host answered badly: {error}") from None
        self.runtime_active = self.runtime_active or outcome["runtime_active"]
        failure = outcome.get("error")
        if failure is not None:
            raise BrokerError(failure["code"], failure["message"], failure["data"])
        return outcome.get("content") or {}

    def _notified(self, method: str, params: Any) -> None:
        if not isinstance(params, dict):
            return
        ctx = self._calls.get(params.get("call"))  # type: ignore[arg-type]
        if ctx is None:
            return
        if method == p.PROGRESS and isinstance(params.get("message"), str):
            ctx.progress(params["message"])
        elif method == p.STATUS and isinstance(params.get("state"), str):
            ctx.status(params["state"], params.get("message"))
        elif method == p.DIAGNOSTIC and isinstance(params.get("item"), dict):
            ctx.diagnostic(params["item"])

    async def aclose(self) -> None:
        await self.endpoint.aclose()


class HostLink:
    """One MCP server's way to one workspace's host, across host restarts."""

    def __init__(self, config: HostConfig, group: TaskGroup) -> None:
        self.config = config
        self._group = group
        self.client: HostClient | None = None
        self.generation = 0  # how many connections this link made
        self.restarts = 0  # connections lost to a host that stopped
        self._minted: HandleOrigins[int] = HandleOrigins()  # handle id -> generation
        self._lock = anyio.Lock()
        self._started = False

    async def connected(self) -> HostClient:
        """The live connection, made (and the host started) when there is none."""
        async with self._lock:
            client = self.client
            if client is None or not client.alive:
                if client is not None:
                    self._started = self._started or client.runtime_active
                    await client.aclose()
                self.client = client = await HostClient.open(self.config, self._group)
                self.generation += 1
            return client

    async def call(self, tool: str, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        client = await self.connected()
        generation = self.generation
        self._check_handle(arguments, generation)
        try:
            content = await client.call(tool, self.config.root, arguments, ctx)
        except Disconnected as gone:
            self.restarts += 1
            raise BrokerError(
                "backendRestarted",
                f"the shared Lean host of this workspace stopped during the call ({gone}); "
                "the next call starts a new one",
                {"retry_after_ms": RETRY_AFTER_MS},
            ) from None
        self._minted.note(content, generation)
        return content

    def _check_handle(self, arguments: dict[str, Any], generation: int) -> None:
        handle_id, made = self._minted.of(arguments)
        if made is not None and made != generation:
            raise BrokerError(
                "handleNotFound",
                "this handle was made by a shared Lean host that has stopped since; its state "
                "is gone",
                {"reason": "hostRestarted", "handle": {"id": handle_id}},
            )

    @property
    def runtime_active(self) -> bool:
        """Whether a host of this link has started a Lean session."""
        return self._started or (self.client is not None and self.client.runtime_active)

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.aclose()
            self.client = None


class HandleOrigins(Generic[T]):
    """Where each handle a result handed out came from (a host generation, a workspace), for
    the ``HANDLES_REMEMBERED`` most recent handles."""

    def __init__(self) -> None:
        self._origins: OrderedDict[str, T] = OrderedDict()

    def note(self, content: dict[str, Any], origin: T) -> None:
        for handle_id in minted(content):
            self._origins[handle_id] = origin
        while len(self._origins) > HANDLES_REMEMBERED:
            self._origins.popitem(last=False)

    def of(self, arguments: dict[str, Any]) -> tuple[str | None, T | None]:
        """The handle id a call passes (if any) and where it came from (if remembered)."""
        handle_id = handle_of(arguments)
        return handle_id, self._origins.get(handle_id) if handle_id is not None else None


def handle_of(arguments: dict[str, Any]) -> str | None:
    """The id of the handle a call passes, if any."""
    handle = arguments.get("handle")
    handle_id = handle.get("id") if isinstance(handle, dict) else None
    return handle_id if isinstance(handle_id, str) else None


def minted(content: dict[str, Any]) -> list[str]:
    """The ids of the handles a result hands out (``next_handle``, ``lean_try``'s results)."""
    found = [content.get("next_handle")]
    results = content.get("results")
    if isinstance(results, list):
        found += [item.get("handle") for item in results if isinstance(item, dict)]
    return [h["id"] for h in found if isinstance(h, dict) and isinstance(h.get("id"), str)]


def ask(socket_path: str, method: str, timeout_s: float = 2.0) -> Any:
    """One question to the host at ``socket_path`` as a probe (no lease, any runtime):
    ``host/stats`` or ``host/stop``. ``OSError`` or ``RpcFailure`` when it cannot answer."""
    hello: p.Hello = {"protocol": p.PROTOCOL, "runtime_id": "", "role": "probe", "pid": os.getpid()}
    with SyncChannel(socket_path, timeout_s) as channel:
        channel.send({"jsonrpc": "2.0", "id": 1, "method": p.HELLO, "params": hello})
        _answer(channel, 1)
        channel.send({"jsonrpc": "2.0", "id": 2, "method": method, "params": {}})
        return _answer(channel, 2)


def _answer(channel: SyncChannel, request_id: int) -> Any:
    while True:
        message = channel.receive()
        if message is None:
            raise ConnectionResetError("the host closed the connection")
        if message.get("id") != request_id or "method" in message:
            continue
        error = message.get("error")
        if isinstance(error, dict):
            raise RpcFailure(int(error.get("code") or 0), str(error.get("message")))
        return message.get("result")
