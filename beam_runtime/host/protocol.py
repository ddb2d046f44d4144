"""The host protocol: its typed messages, the one schema of record, and its version.

Every message a host and its clients exchange is one of the TypedDicts below, sent as the
``params`` or ``result`` of a JSON-RPC message (``rpc``). ``check`` validates a received value
against its TypedDict, so a malformed message is refused where it arrives. ``PROTOCOL`` changes
whenever a message changes; the handshake (``host/hello``) refuses another protocol or another
runtime id, so a client only ever talks to a host running the same code. Postponed annotations
are off on purpose: ``NotRequired`` must be seen when a class is made (see ``broker/results.py``).
"""

import functools
import types
import typing
from typing import Any, Literal

import typing_extensions
from typing_extensions import NotRequired, TypedDict

PROTOCOL = 1

HELLO = "host/hello"  # request, client -> host, first message: Hello -> Welcome
CALL = "host/call"  # request: CallParams -> CallOutcome
STATS = "host/stats"  # request: {} -> HostStats
STOP = "host/stop"  # request: {} -> {} (the host then shuts down)
PROGRESS = "host/progress"  # notification, host -> client: Progress
STATUS = "host/status"  # notification: Status
DIAGNOSTIC = "host/diagnostic"  # notification: Diagnostic
CANCEL = "$/cancelRequest"  # notification, client -> host: {id}

Role = Literal["agent", "probe"]  # an agent's connection is a lease; a probe's is not


class Hello(TypedDict):
    protocol: int
    runtime_id: str
    role: Role
    pid: int
    root: NotRequired[str]  # an agent names the workspace it expects


class Welcome(TypedDict):
    protocol: int
    runtime_id: str
    pid: int  # the host's
    connection: str  # this connection's id: the owner of its handles and scratch documents
    root: str


class CallParams(TypedDict):
    tool: str
    root: str
    arguments: dict[str, Any]  # the admitted input, every field with its default


class ToolFailure(TypedDict):
    code: str
    message: str
    data: dict[str, Any] | None


class CallOutcome(TypedDict):
    content: NotRequired[dict[str, Any]]  # the tool's structuredContent
    error: NotRequired[ToolFailure]
    runtime_active: bool  # this connection's calls have run on a Lean session (beam_version)


class Progress(TypedDict):
    call: int  # the id of the host/call request it belongs to
    message: str


class Status(TypedDict):
    call: int
    state: str
    message: str | None


class Diagnostic(TypedDict):
    call: int
    item: dict[str, Any]


class Cancel(TypedDict):
    id: int


class HostStats(TypedDict):
    root: str
    toolchain: str
    runtime_id: str
    pid: int
    socket: str
    connections: int  # agents connected now
    documents: int  # open documents, scratch documents included
    lean_processes: int
    pss_bytes: int  # summed PSS of this host's Lean processes
    idle_s: float  # since the last call ended (0 while one runs)
    sessions: dict[str, dict[str, Any]]  # beam_stats `session` objects by root


class MessageError(ValueError):
    """A received message that does not match its TypedDict."""


def check(kind: Any, value: Any, where: str = "message") -> Any:
    """``value`` when it matches ``kind`` (a TypedDict or a type), else ``MessageError``."""
    problem = _problem(kind, value, where)
    if problem is not None:
        raise MessageError(problem)
    return value


@functools.cache
def _hints(kind: type) -> tuple[dict[str, Any], frozenset[str]]:
    hints = typing_extensions.get_type_hints(kind)
    return hints, frozenset(getattr(kind, "__required_keys__", hints))


def _problem(kind: Any, value: Any, where: str) -> "str | None":
    origin = typing_extensions.get_origin(kind)
    if typing_extensions.is_typeddict(kind):
        return _typed_dict(kind, value, where)
    if origin is Literal:
        return None if value in typing.get_args(kind) else f"{where}: {value!r} is not allowed"
    if origin in (typing.Union, types.UnionType):
        fits = any(_problem(arm, value, where) is None for arm in typing.get_args(kind))
        return None if fits else f"{where}: unexpected {type(value).__name__}"
    if kind is Any:
        return None
    if kind is type(None):
        return None if value is None else f"{where}: expected null"
    base = origin or kind
    if base is float:
        ok = type(value) in (int, float)
    elif base in (int, bool):
        ok = type(value) is base
    else:
        ok = isinstance(value, base)
    return None if ok else f"{where}: expected {getattr(base, '__name__', base)}"


def _typed_dict(kind: type, value: Any, where: str) -> "str | None":
    if not isinstance(value, dict):
        return f"{where}: expected an object"
    hints, required = _hints(kind)
    for name, hint in hints.items():
        if name not in value:
            if name in required:
                return f"{where}.{name}: missing"
            continue
        problem = _problem(hint, value[name], f"{where}.{name}")
        if problem is not None:
            return problem
    return None
