"""The fake's RPC: ``$/lean/rpc/connect``, ``call``, ``keepAlive`` and ``release``.

Session ids are random 64-bit numbers sent as decimal strings. A session belongs to one document
worker: it dies when the worker restarts (header change, crash) and expires
``FAKE_LEAN_RPC_EXPIRY_MS`` (default 30000) after its last keep-alive or release; calls on a dead
session get ``-32900 Outdated RPC session``. ``FAKE_LEAN_RPC=0`` makes ``connect`` unknown
(``-32601``), as a server without RPC. The one procedure served is
``Lean.Widget.getInteractiveGoals``, built from the same goals as ``$/lean/plainGoal``.

References are sent as Lean sends them: ``{"p": "<n>"}`` (wire format v0) unless the client's
``initialize`` asked for ``capabilities.lean.rpcWireFormat: "v1"``, then ``{"__rpcref": "<n>"}``.
The switches of ``RpcOptions`` model older or broken servers (see README.md, "RPC").
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.fake_lean import layout

if TYPE_CHECKING:
    from tests.fake_lean.config import Settings
    from tests.fake_lean.watchdog import Pending, Server

OUTDATED_SESSION = -32900
GET_GOALS = "Lean.Widget.getInteractiveGoals"


@dataclass
class RpcSession:
    uri: str
    worker: int  # the document's worker generation it was made for
    last: float = field(default_factory=time.monotonic)
    refs: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class RpcOptions:
    """The RPC switches, from the environment."""

    no_session: bool = False  # FAKE_LEAN_RPC=nosession: connect answers null
    fail: tuple[str, int] | None = None  # FAKE_LEAN_RPC_FAIL=connect:-32602, call:-32603, ...
    delay_s: float = 0.0  # FAKE_LEAN_RPC_DELAY_MS: connect and call answer this much later
    advertise: bool | None = None  # FAKE_LEAN_RPC_ADVERTISE=0|1; unset: RPC on, newer profile
    wire: str = ""  # FAKE_LEAN_RPC_WIRE=v1: v1 references whatever the client asked for

    @classmethod
    def from_env(cls) -> RpcOptions:
        fail = None
        method, _, code = os.environ.get("FAKE_LEAN_RPC_FAIL", "").partition(":")
        if method and code.lstrip("-").isdigit():
            fail = (method, int(code))
        advertise = os.environ.get("FAKE_LEAN_RPC_ADVERTISE")
        return cls(
            no_session=os.environ.get("FAKE_LEAN_RPC") == "nosession",
            fail=fail,
            delay_s=float(os.environ.get("FAKE_LEAN_RPC_DELAY_MS") or 0) / 1000,
            advertise=None if advertise in (None, "") else advertise != "0",
            wire=os.environ.get("FAKE_LEAN_RPC_WIRE", ""),
        )


def advertised(settings: Settings) -> bool:
    """Whether ``initialize`` names ``experimental.rpcProvider`` (newer servers only)."""
    choice = RpcOptions.from_env().advertise
    return settings.rpc and not settings.legacy if choice is None else choice


@dataclass
class RpcState:
    sessions: dict[str, RpcSession] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    next_ref: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    options: RpcOptions = field(default_factory=RpcOptions.from_env)
    wire_v1: bool = False  # the client asked for wire format v1

    def configure(self, lean_capabilities: dict[str, Any]) -> None:
        """Read the client's ``capabilities.lean`` from ``initialize``."""
        asked = lean_capabilities.get("rpcWireFormat") == "v1"
        self.wire_v1 = asked or self.options.wire == "v1"

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def to_json(self) -> dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "sessions": {
                sid: {"uri": s.uri, "refs": len(s.refs)} for sid, s in self.sessions.items()
            },
        }


def connect(server: Server, pending: Pending, params: Any) -> Any:
    _misbehave(server, pending, "connect")
    doc = server.document(pending)
    if server.rpc.options.no_session:
        return None
    session_id = str(secrets.randbits(64) | (1 << 63))  # 20 digits: not a safe float
    with server.rpc.lock:
        server.rpc.count("connect")
        server.rpc.sessions[session_id] = RpcSession(doc.uri, doc.worker_gen)
    return {"sessionId": session_id}


def call(server: Server, pending: Pending, params: Any) -> Any:
    from tests.fake_lean import features
    from tests.fake_lean.watchdog import METHOD_NOT_FOUND, RpcError

    _misbehave(server, pending, "call")
    doc = server.document(pending)
    session_id = params.get("sessionId")
    with server.rpc.lock:
        server.rpc.count("call")
        session = server.rpc.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is not None and _expired(server, session, doc.worker_gen):
            server.rpc.sessions.pop(session_id, None)
            session = None
    if session is None or session.uri != doc.uri:
        raise RpcError(OUTDATED_SESSION, "Outdated RPC session")
    if params.get("method") != GET_GOALS:
        raise RpcError(METHOD_NOT_FOUND, f"No RPC method '{params.get('method')}' found")
    goals = features.goals_for(server, pending, params.get("params") or params)
    if goals is None:
        return None
    with server.rpc.lock:
        refs = layout.Refs(server.rpc.next_ref, "__rpcref" if server.rpc.wire_v1 else "p")
        answer = {"goals": [goal.interactive(refs, n) for n, goal in enumerate(goals)]}
        server.rpc.next_ref = refs.next
        session.refs.update(refs.issued)
    return answer


def notification(server: Server, method: str, params: Any) -> dict[str, Any]:
    """``keepAlive`` and ``release`` refresh a session; ``release`` also drops references.
    Returns what the request log records besides the method (for a release: how many of the
    session's references it dropped and how many the session still holds)."""
    session_id = params.get("sessionId") if isinstance(params, dict) else None
    with server.rpc.lock:
        server.rpc.count("keepAlive" if method.endswith("keepAlive") else "release")
        session = server.rpc.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            return {}
        session.last = time.monotonic()
        if not method.endswith("release"):
            return {}
        before = len(session.refs)
        for ref in params.get("refs") or []:
            if isinstance(ref, dict):
                session.refs.discard(str(ref.get("__rpcref", ref.get("p"))))
        return {"released": before - len(session.refs), "held": len(session.refs)}


def _misbehave(server: Server, pending: Pending, method: str) -> None:
    """The delay and failures the switches ask for, before ``method`` answers."""
    from tests.fake_lean.watchdog import METHOD_NOT_FOUND, RpcError

    options = server.rpc.options
    if options.delay_s:
        time.sleep(options.delay_s)
    if not server.settings.rpc:
        raise RpcError(METHOD_NOT_FOUND, f"No request handler found for '{pending.method}'")
    if options.fail is not None and options.fail[0] == method:
        raise RpcError(options.fail[1], f"fake RPC failure of {pending.method}")


def _expired(server: Server, session: RpcSession, worker: int) -> bool:
    age_ms = (time.monotonic() - session.last) * 1000
    return session.worker != worker or age_ms > server.settings.rpc_expiry_ms
