"""Goals at a position: Lean's RPC (``getInteractiveGoals``) first, ``$/lean/plainGoal`` after.

RPC exists in every supported Lean; newer servers also advertise ``experimental.rpcProvider``, so
that capability is not consulted: every session tries ``$/lean/rpc/connect``. One RPC session per
open document, its id kept as the string Lean sent (a 64-bit number: never converted). While a
document has a session the broker sends ``$/lean/rpc/keepAlive`` for it every
``Limits.rpc_keepalive_s`` (Lean drops a session 30 s after the last one). An outdated session
(``-32900``, e.g. after the worker restarted) is replaced once per call. The references an answer
holds (``{"p": id}``, or ``{"__rpcref": id}`` in wire format v1; only string ids) are released
right after it is read, and the session is released when the document closes.

Falling back: when connect or call answers ``-32601`` (no such method), ``-32602``, ``-32603``,
or connect gives no session id, this Lean session is taken to have no usable RPC and every later
question goes straight to ``plainGoal``; any other failure that is not about a closed or changed
file falls back for that one question. The result says which source answered (``source``).
One time bound covers the whole question: connect, call, reconnect and the fallback together.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio

from beam_runtime.broker import errors
from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.queries import interactive
from beam_runtime.broker.queries.goals import parse_plain_goal
from beam_runtime.broker.session.session import LeanSession
from beam_runtime.lsp import messages
from beam_runtime.lsp.errors import LspError

GET_GOALS = "Lean.Widget.getInteractiveGoals"
OUTDATED_SESSION = -32900
NO_RPC_CODES = frozenset((-32601, -32602, -32603))  # method not found, invalid params, internal
_FALLBACK_CODES = frozenset(("internalError", "requestCancelled"))


class RpcUnavailable(Exception):
    """This call cannot be answered over RPC; the caller falls back to ``plainGoal``."""


class Budget:
    """One deadline for every request of one goals question."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.end = anyio.current_time() + timeout_s

    def left(self, what: str) -> float:
        """Seconds left for ``what``; none left is the ``timeout`` tool error."""
        left = self.end - anyio.current_time()
        if left <= 0:
            raise self.expired(what)
        return left

    def expired(self, what: str) -> BrokerError:
        return errors.timeout("navigation", round(self.timeout_s * 1000), what)


class RpcSessions:
    """The RPC sessions of one Lean session, by document URI."""

    def __init__(self, session: LeanSession) -> None:
        self.session = session
        self.ids: dict[str, str] = {}
        self.supported = True  # until this Lean session shows otherwise
        self._keeping_alive = False

    async def call(self, uri: str, method: str, params: dict[str, Any], budget: Budget) -> Any:
        for attempt in range(2):
            session_id = await self._connect(uri, budget, fresh=attempt > 0)
            call = {
                "textDocument": {"uri": uri},
                "position": params["position"],
                "sessionId": session_id,
                "method": method,
                "params": params,
            }
            try:
                answer = await self.session.request(
                    "$/lean/rpc/call",
                    call,
                    phase="navigation",
                    timeout_s=budget.left("$/lean/rpc/call"),
                )
            except BrokerError as error:
                code = _lsp_code(error)
                if code == OUTDATED_SESSION and attempt == 0:
                    self.ids.pop(uri, None)
                    continue
                raise self._fallback_or(error, code) from None
            await self._release(uri, session_id, interactive.references(answer))
            return answer
        raise RpcUnavailable("the RPC session went out of date twice")

    async def _connect(self, uri: str, budget: Budget, *, fresh: bool) -> str:
        known = self.ids.get(uri)
        if known is not None and not fresh:
            return known
        try:
            answer = await self.session.request(
                "$/lean/rpc/connect",
                {"uri": uri},
                phase="navigation",
                timeout_s=budget.left("$/lean/rpc/connect"),
            )
        except BrokerError as error:
            raise self._fallback_or(error, _lsp_code(error)) from None
        session_id = answer.get("sessionId") if isinstance(answer, dict) else None
        if isinstance(session_id, int) and not isinstance(session_id, bool):
            session_id = str(session_id)  # not what Lean sends, but exact for an int
        if not isinstance(session_id, str):
            self.supported = False
            raise RpcUnavailable(f"$/lean/rpc/connect answered {answer!r}")
        self.ids[uri] = session_id
        self._start_keepalive()
        return session_id

    def _start_keepalive(self) -> None:
        channel = self.session.channel
        if self._keeping_alive or channel is None:
            return
        self._keeping_alive = True
        channel.spawn(self._keep_alive)

    async def _keep_alive(self) -> None:
        period = self.session.limits.rpc_keepalive_s
        try:
            while self.session.alive:
                await anyio.sleep(period)
                for uri, session_id in list(self.ids.items()):
                    params = {"uri": uri, "sessionId": session_id}
                    await self.session.notify("$/lean/rpc/keepAlive", params)
        except Exception:  # the server went away (or the pipe broke): nothing to keep alive;
            return  # never let this task take the client's task group down with it
        finally:
            self._keeping_alive = False

    async def _release(self, uri: str, session_id: str, refs: list[Any]) -> None:
        if not refs or not self.session.alive:
            return
        params = {"uri": uri, "sessionId": session_id, "refs": refs}
        with contextlib.suppress(BrokerError, LspError):
            await self.session.notify("$/lean/rpc/release", params)

    def _fallback_or(self, error: BrokerError, code: int | None) -> Exception:
        """Errors about the document itself (and timeouts) stand; anything else means "ask
        plainGoal", and the codes of a server without usable RPC mean it for the session."""
        if code in NO_RPC_CODES:
            self.supported = False
            return RpcUnavailable(error.message)
        if error.code in _FALLBACK_CODES or code == OUTDATED_SESSION:
            return RpcUnavailable(error.message)
        return error

    async def forget(self, uri: str) -> None:
        """The document is closing: release its session and stop keeping it alive."""
        session_id = self.ids.pop(uri, None)
        if session_id is not None and self.session.alive:
            params = {"uri": uri, "sessionId": session_id, "refs": []}
            with contextlib.suppress(BrokerError, LspError):
                await self.session.notify("$/lean/rpc/release", params)


def rpc_of(session: LeanSession) -> RpcSessions:
    if session.rpc is None:
        session.rpc = RpcSessions(session)
    rpc: RpcSessions = session.rpc
    return rpc


async def goals_at(
    session: LeanSession, uri: str, position: dict[str, int], timeout_s: float
) -> tuple[str, list[dict[str, Any]]] | None:
    """``(source, goals)`` at the position, or ``None`` when Lean has no tactic state there;
    everything it sends shares ``timeout_s``."""
    budget = Budget(timeout_s)
    try:
        return await _goals_within(session, uri, position, budget)
    except BrokerError as error:
        if error.code == "timeout":  # a request ran out of what the budget had left
            raise budget.expired(f"goals at {position['line']}:{position['character']}") from None
        raise


async def _goals_within(
    session: LeanSession, uri: str, position: dict[str, int], budget: Budget
) -> tuple[str, list[dict[str, Any]]] | None:
    params = {"textDocument": {"uri": uri}, "position": position}
    rpc = rpc_of(session)
    if rpc.supported:
        try:
            answer = await rpc.call(uri, GET_GOALS, params, budget)
        except RpcUnavailable:
            pass
        else:
            if not isinstance(answer, dict):
                return None
            return "rpc", interactive.structured_goals(answer)
    plain = await session.request(
        "$/lean/plainGoal",
        messages.position(uri, position["line"], position["character"]),
        phase="navigation",
        timeout_s=budget.left("$/lean/plainGoal"),
    )
    if not isinstance(plain, dict):
        return None
    return "plainGoal", parse_plain_goal(plain)


def _lsp_code(error: BrokerError) -> int | None:
    data = error.data if isinstance(error.data, dict) else {}
    code = data.get("lsp_code")
    return code if isinstance(code, int) else None
