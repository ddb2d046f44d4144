"""The fake's RPC: ``$/lean/rpc/connect``, ``call``, ``keepAlive`` and ``release``.

Session ids are random 64-bit numbers sent as decimal strings. A session belongs to one document
worker: it dies when the worker restarts (header change, crash) and expires
``FAKE_LEAN_RPC_EXPIRY_MS`` (default 30000) after its last keep-alive or release; calls on a dead
session get ``-32900 Outdated RPC session``. ``FAKE_LEAN_RPC=0`` makes ``connect`` unknown
(``-32601``), as a server without RPC. The one procedure served is
``Lean.Widget.getInteractiveGoals``, built from the same goals as ``$/lean/plainGoal``.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.fake_lean import layout

if TYPE_CHECKING:
    from tests.fake_lean.watchdog import Pending, Server

OUTDATED_SESSION = -32900
GET_GOALS = "Lean.Widget.getInteractiveGoals"


@dataclass
class RpcSession:
    uri: str
    worker: int  # the document's worker generation it was made for
    last: float = field(default_factory=time.monotonic)
    refs: set[str] = field(default_factory=set)


@dataclass
class RpcState:
    sessions: dict[str, RpcSession] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    next_ref: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

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
    from tests.fake_lean.watchdog import METHOD_NOT_FOUND, RpcError

    if not server.settings.rpc:
        raise RpcError(METHOD_NOT_FOUND, f"No request handler found for '{pending.method}'")
    doc = server.document(pending)
    session_id = str(secrets.randbits(64) | (1 << 63))  # 20 digits: not a safe float
    with server.rpc.lock:
        server.rpc.count("connect")
        server.rpc.sessions[session_id] = RpcSession(doc.uri, doc.worker_gen)
    return {"sessionId": session_id}


def call(server: Server, pending: Pending, params: Any) -> Any:
    from tests.fake_lean import features
    from tests.fake_lean.watchdog import METHOD_NOT_FOUND, RpcError

    if not server.settings.rpc:
        raise RpcError(METHOD_NOT_FOUND, f"No request handler found for '{pending.method}'")
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
        refs = layout.Refs(server.rpc.next_ref)
        answer = {"goals": [goal.interactive(refs, n) for n, goal in enumerate(goals)]}
        server.rpc.next_ref = refs.next
        session.refs.update(refs.issued)
    return answer


def notification(server: Server, method: str, params: Any) -> None:
    """``keepAlive`` and ``release`` refresh a session; ``release`` also drops references."""
    session_id = params.get("sessionId") if isinstance(params, dict) else None
    with server.rpc.lock:
        server.rpc.count("keepAlive" if method.endswith("keepAlive") else "release")
        session = server.rpc.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            return
        session.last = time.monotonic()
        if method.endswith("release"):
            for ref in params.get("refs") or []:
                if isinstance(ref, dict):
                    session.refs.discard(str(ref.get("__rpcref", ref.get("p"))))


def _expired(server: Server, session: RpcSession, worker: int) -> bool:
    age_ms = (time.monotonic() - session.last) * 1000
    return session.worker != worker or age_ms > server.settings.rpc_expiry_ms
