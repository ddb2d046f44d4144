"""Synchronous request routing: family selection, lifecycle, every method except running Lean.

The router answers everything it can at once through an `Outbox`. A `tools/call` that needs
the Lean backend comes back as a `PendingCall`, which the async server runs. Because nothing
here imports anyio or pydantic, the server answers `server/discover` and `tools/list` before
those are loaded; valid tool arguments are admitted from the schema (`tools.admit`), so pydantic
loads only for arguments the schema rejects.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from beam_mcp import families as fam
from beam_mcp.errors import ToolError
from beam_mcp.families import Family, Lifecycle
from beam_mcp.settings import Settings
from beam_mcp.stats import Stats
from beam_mcp.tools.catalog import BY_NAME, ToolSpec
from beam_mcp.wire import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    Invalid,
    Message,
    Notification,
    Request,
    RequestId,
    RpcError,
    error_message,
    excerpt,
    id_key,
    names,
    quoted,
    result_message,
    tool_result_message,
    valid_id,
)

if TYPE_CHECKING:
    from pydantic import ValidationError

    from beam_mcp.backend import ToolInput

SERVER_NAME = "lean-beam-mcp"
INSTRUCTIONS = (
    "Every workspace-bound tool call names its Lean project explicitly in "
    'arguments.workspace = {"root": "/absolute/path"}; no call depends on an earlier one. '
    "Paths are relative to the root or absolute. Beam never edits .lean files. Positions: "
    "line+character (0-based, character in UTF-16 units), or line1+match[+occurrence] (1-based "
    "line, first character of the match), or declaration+sorry (K-th sorry, 1-based); omit "
    "version to use the file as it is on disk; results echo position and version. Lean tools "
    "wait at most wait_ms (default 45000): lean_sync then answers readiness.reason "
    "stillElaborating with retry_after_ms (call again to keep waiting), other tools the error "
    "timeout; a Lean still starting counts too (error starting, retry_after_ms). Results "
    "over the byte budget carry truncated: {field: omitted count}; narrow "
    "the range or diagnostic_scope to see the rest. Errors carry data.fix. Pass "
    "params._meta.progressToken for notifications/progress."
)
CAPABILITIES = {"logging": {}, "tools": {"listChanged": False}}
CACHE_HINT = {"ttlMs": 3_600_000, "cacheScope": "public"}
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema.json")
IDENTITY_TTL_S = 0.5
NO_PLUGINS = "PYDANTIC_DISABLE_PLUGINS"
_CALL_KEYS = frozenset(("name", "arguments", "_meta", "inputResponses", "requestState"))


class Outbox(Protocol):
    def send(self, data: bytes, done: Callable[[], None] | None = None) -> None: ...


class Host(Outbox, Protocol):
    """What the router needs from the server that owns it (given at construction)."""

    def cancel(self, rid: RequestId) -> None:
        """A `notifications/cancelled` for a request that may be running."""
        ...

    def runtime_active(self) -> bool: ...

    def sessions(self) -> dict[str, dict[str, Any]]:
        """The `session` objects of `beam_stats`, per cached workspace."""
        ...


@dataclass
class PendingCall:
    """A validated `tools/call` for the backend, owned by its request id until answered."""

    request_id: RequestId
    spec: ToolSpec
    arguments: ToolInput  # the validated input: an `Arguments` or the pydantic model
    root: str  # as given until the call runs, then canonical (`Calls.execute`)
    token: str | int | None
    modern: bool
    log_level: str | None  # the modern request's own level; legacy uses the connection level
    path: str | None
    admitted: float

    @property
    def tool(self) -> str:
        return self.spec.name


class Router:
    def __init__(self, settings: Settings, host: Host) -> None:
        from beam_runtime.version import VERSION

        self.settings = settings
        self.outbox: Outbox = host
        self.host = host
        self.version = VERSION
        self.server_info = {"name": SERVER_NAME, "version": VERSION}
        self.state = fam.FamilyState()
        self.legacy_level = "debug"
        self.stats = Stats()
        self.active: set[tuple[str, RequestId]] = set()
        self.shutting_down = False
        self._tools_list: dict[str, Any] | None = None
        self._identity: tuple[float, dict[str, Any]] | None = None

    # ---------------------------------------------------------------- entry point

    def handle(self, message: Message) -> PendingCall | None:
        if isinstance(message, Notification):
            self._notification(message)
            return None
        if isinstance(message, Invalid):
            if message.id is None or id_key(message.id) not in self.active:
                self.outbox.send(error_message(message.id, message.error))
            return None
        key = id_key(message.id)
        if key in self.active:
            return None  # a second request reusing a live id is ignored
        self.active.add(key)
        try:
            return self._request(message)
        except RpcError as err:
            self.error(message.id, err)
        except Exception as exc:  # a bug must not kill the transport
            self.error(message.id, RpcError(INTERNAL_ERROR, f"internal error: {exc}"))
        return None

    def release(self, rid: RequestId) -> Callable[[], None]:
        key = id_key(rid)
        return lambda: self.active.discard(key)

    def respond(
        self, rid: RequestId, result: dict[str, Any], modern: bool, cache: bool = False
    ) -> None:
        if modern:
            result = self._decorate(result, cache)
        self.outbox.send(result_message(rid, result), self.release(rid))

    def error(self, rid: RequestId, err: RpcError) -> None:
        self.outbox.send(error_message(rid, err), self.release(rid))

    # ---------------------------------------------------------------- families

    def _request(self, req: Request) -> PendingCall | None:
        if self.shutting_down:
            raise RpcError(INVALID_REQUEST, "the MCP server is shutting down")
        if fam.is_modern(req.method, req.params):
            return self._modern(req)
        return self._legacy(req)

    def _modern(self, req: Request) -> PendingCall | None:
        if self.state.family is Family.LEGACY:
            raise self.state.cross_family(Family.MODERN)
        meta = fam.parse_modern_meta(req.params)
        if req.method == "server/discover":
            _only(req.params, ("_meta",), "server/discover")
            self.respond(
                req.id,
                {
                    "supportedVersions": list(fam.SUPPORTED_MODERN),
                    "capabilities": CAPABILITIES,
                    "serverInfo": self.server_info,
                    "instructions": INSTRUCTIONS,
                },
                True,
                cache=True,
            )
            return None
        if req.method not in ("tools/list", "tools/call"):
            raise _not_found(req.method, fam.MODERN_VERSION)
        self.state.family = Family.MODERN
        return self._operation(req, modern=True, log_level=meta.log_level)

    def _legacy(self, req: Request) -> PendingCall | None:
        state = self.state
        if state.family is Family.MODERN:
            if req.method in fam.LEGACY_ONLY:
                raise state.cross_family(Family.LEGACY)
            raise RpcError(
                INVALID_PARAMS,
                "modern MCP requests require params._meta with "
                f'"{fam.META_VERSION}" and "{fam.META_CAPABILITIES}"',
            )
        if req.method == "initialize":
            self._initialize(req)
            return None
        if req.method == "ping":
            _only(req.params, ("_meta",), "ping")
            self.respond(req.id, {}, False)
            return None
        if req.method not in ("tools/list", "tools/call", "logging/setLevel"):
            raise _not_found(req.method, fam.LEGACY_VERSION)
        if state.lifecycle is Lifecycle.FRESH:
            raise RpcError(
                INVALID_REQUEST, "initialize must complete before MCP operation requests"
            )
        if state.lifecycle is Lifecycle.INITIALIZED:
            raise RpcError(
                INVALID_REQUEST,
                "notifications/initialized is required before MCP operation requests",
            )
        if req.method == "logging/setLevel":
            self._set_level(req)
            return None
        return self._operation(req, modern=False, log_level=None)

    def _initialize(self, req: Request) -> None:
        if self.state.lifecycle is not Lifecycle.FRESH:
            raise RpcError(INVALID_REQUEST, "initialize has already completed")
        fam.check_initialize(req.params)
        self.state.family = Family.LEGACY
        self.state.lifecycle = Lifecycle.INITIALIZED
        self.state.revision = fam.negotiate(req.params["protocolVersion"])
        self.respond(
            req.id,
            {
                "protocolVersion": self.state.revision,
                "capabilities": CAPABILITIES,
                "serverInfo": self.server_info,
                "instructions": INSTRUCTIONS,
            },
            False,
        )

    def _set_level(self, req: Request) -> None:
        _only(req.params, ("level", "_meta"), "logging/setLevel")
        level = req.params.get("level")
        if level not in fam.LOG_RANK:
            raise RpcError(
                INVALID_PARAMS,
                f"invalid log level {level!r}; expected one of {', '.join(fam.LOG_LEVELS)}",
            )
        self.legacy_level = str(level)
        self.respond(req.id, {}, False)

    def _notification(self, note: Notification) -> None:
        if note.method == "notifications/initialized":
            state = self.state
            if state.family is Family.LEGACY and state.lifecycle is Lifecycle.INITIALIZED:
                state.lifecycle = Lifecycle.READY
        elif note.method == "notifications/cancelled":
            rid = note.params.get("requestId")
            if isinstance(rid, (str, int)) and valid_id(rid):
                self.host.cancel(rid)
        # Other notifications carry nothing this server acts on.

    def _decorate(self, result: dict[str, Any], cache: bool) -> dict[str, Any]:
        meta = dict(result.get("_meta") or {})
        meta[fam.META_SERVER_INFO] = self.server_info
        out = {**result, "resultType": "complete", "_meta": meta}
        if cache:
            out.update(CACHE_HINT)
        return out

    def _tool_decoration(self) -> dict[str, Any]:
        """What `_decorate` adds to a tool result (which has no `_meta` of its own)."""
        return {"resultType": "complete", "_meta": {fam.META_SERVER_INFO: self.server_info}}

    # ---------------------------------------------------------------- operations

    def _operation(
        self, req: Request, *, modern: bool, log_level: str | None
    ) -> PendingCall | None:
        if req.method == "tools/list":
            self._list(req, modern)
            return None
        return self._call(req, modern, log_level)

    def _list(self, req: Request, modern: bool) -> None:
        _only(req.params, ("cursor", "_meta"), "tools/list")
        if req.params.get("cursor") is not None:
            raise RpcError(INVALID_PARAMS, "tools/list has a single page; cursor is not valid")
        if self._tools_list is None:
            with open(SCHEMA_FILE, "rb") as handle:
                self._tools_list = json.load(handle)
        listed = self._tools_list
        if not modern:
            listed = tools_for_revision(listed, self.state.revision)
        self.respond(req.id, listed, modern, cache=True)

    def _call(self, req: Request, modern: bool, log_level: str | None) -> PendingCall | None:
        params = req.params
        extra = sorted(k for k in params if k not in _CALL_KEYS)
        if extra:
            raise RpcError(INVALID_PARAMS, f"tools/call does not accept: {names(extra)}")
        mrtr = [k for k in ("inputResponses", "requestState") if k in params]
        if mrtr:
            raise RpcError(
                INVALID_PARAMS,
                f"{mrtr[0]} is only valid after an input_required "
                "result, and this server never returns one",
            )
        name = params.get("name")
        spec = BY_NAME.get(name) if isinstance(name, str) else None
        if spec is None:
            raise RpcError(INVALID_PARAMS, f"unknown tool: {quoted(name)}")
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "tools/call arguments must be an object")
        token = _progress_token(params.get("_meta"))
        started = time.monotonic()
        try:
            if spec.process:
                content = self._process_tool(spec, arguments)
            else:
                return self._admit(req.id, spec, arguments, token, modern, log_level, started)
        except ToolError as err:
            self.finish_call(req.id, spec.name, None, started, modern, error=err)
            return None
        self.finish_call(req.id, spec.name, None, started, modern, content=content)
        return None

    def _admit(
        self,
        rid: RequestId,
        spec: ToolSpec,
        arguments: dict[str, Any],
        token: str | int | None,
        modern: bool,
        log_level: str | None,
        started: float,
    ) -> PendingCall:
        model = validate_arguments(spec.name, arguments)
        root = model.workspace.root  # checked here as text; canonicalized when the call runs
        _check_root_text()(root)
        path = getattr(model, "path", None)
        return PendingCall(rid, spec, model, root, token, modern, log_level, path, started)

    def _process_tool(self, spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
        if arguments:
            validate_arguments(spec.name, arguments)  # raises the invalidInput error
        result: dict[str, Any] = spec.handler(self)
        return result

    def stats_json(self) -> dict[str, Any]:
        """The `beam_stats` result."""
        return self.stats.to_json(self.host.sessions())

    def identity(self) -> dict[str, Any]:
        now = time.monotonic()
        if self._identity is None or now - self._identity[0] > IDENTITY_TTL_S:
            from beam_runtime.identity import MCP_PROTOCOL, runtime_identity

            ident = runtime_identity(SERVER_NAME, beam_cli=self.settings.beam_cli)
            ident["mcp_protocol"] = MCP_PROTOCOL
            self._identity = (now, ident)
        return {**self._identity[1], "runtime_active": bool(self.host.runtime_active())}

    def finish_call(
        self,
        rid: RequestId,
        tool: str,
        root: str | None,
        started: float,
        modern: bool,
        *,
        content: dict[str, Any] | None = None,
        error: ToolError | None = None,
    ) -> None:
        """Records statistics and writes the final `tools/call` result."""
        ms = (time.monotonic() - started) * 1000
        self.stats.record(tool, root, ms, "ok" if error is None else "error")
        body = content if error is None else error.content()
        extra = self._tool_decoration() if modern else {}
        message = tool_result_message(
            rid,
            body,
            error is not None,
            extra,
            self.settings.result_bytes,
            structured=modern or self.state.structured,
        )
        self.outbox.send(message, self.release(rid))


def tools_for_revision(listed: dict[str, Any], revision: str) -> dict[str, Any]:
    """The `tools/list` payload as a legacy revision knows it: no `outputSchema` before
    structured tool output existed. `listed` itself is left as it is."""
    if fam.has_structured_output(revision):
        return listed
    tools = [{k: v for k, v in tool.items() if k != "outputSchema"} for tool in listed["tools"]]
    return {**listed, "tools": tools}


@cache
def _check_root_text() -> Callable[[str], None]:
    from beam_mcp.workspace import check_root_text

    return check_root_text


def validate_arguments(tool: str, arguments: dict[str, Any]) -> Any:
    """The tool's input: checked against its schema, or by its pydantic model when that fails.

    The schema path returns an `Arguments` without importing pydantic; the model decides (and
    words the `invalidInput` error of) whatever the schema rejects.
    """
    from beam_mcp.tools.admit import admit

    admitted = admit(tool, arguments)
    if admitted is not None:
        return admitted
    return model_arguments(tool, arguments)


@cache
def _models() -> tuple[dict[str, Any], type[ValidationError]]:
    previous = os.environ.get(NO_PLUGINS)
    os.environ[NO_PLUGINS] = "__all__"  # no entry-point scan (importlib.metadata) for plugins
    try:
        from pydantic import ValidationError

        from beam_mcp.tools.models import INPUT_MODELS
    finally:  # the models are built: nothing started later inherits the setting
        if previous is None:
            del os.environ[NO_PLUGINS]
        else:
            os.environ[NO_PLUGINS] = previous
    return INPUT_MODELS, ValidationError


def model_arguments(tool: str, arguments: dict[str, Any]) -> Any:
    """Validates tool arguments with the tool's pydantic model (imported on first use)."""
    input_models, validation_error = _models()
    try:
        return input_models[tool].model_validate(arguments)
    except validation_error as exc:
        problems = [
            {
                "field": ".".join(str(p) for p in e["loc"]) or "(arguments)",
                "problem": e["msg"],
                "type": e["type"],
            }
            for e in exc.errors(include_url=False, include_input=False)
        ]
        summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems[:5])
        raise ToolError(
            "invalidInput", f"invalid {tool} arguments: {summary}", {"errors": problems}
        ) from None


def _progress_token(meta: Any) -> str | int | None:
    if meta is None:
        return None
    if not isinstance(meta, dict):
        raise RpcError(INVALID_PARAMS, "tools/call _meta must be an object")
    if "progressToken" not in meta:
        return None
    token = meta["progressToken"]
    if not valid_id(token):
        raise RpcError(INVALID_PARAMS, "_meta.progressToken must be a string or an integer")
    return token  # type: ignore[no-any-return]


def _only(params: dict[str, Any], allowed: tuple[str, ...], method: str) -> None:
    extra = sorted(k for k in params if k not in allowed)
    if extra:
        raise RpcError(INVALID_PARAMS, f"{method} does not accept: {names(extra)}")


def _not_found(method: str, revision: str) -> RpcError:
    return RpcError(METHOD_NOT_FOUND, f"method not found in MCP {revision}: {excerpt(method)}")
