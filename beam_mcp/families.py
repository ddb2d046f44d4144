"""The two MCP protocol families and the state machine that picks one per transport.

Modern (2026-07-28) requests carry their own metadata in `params._meta`; legacy clients
initialize once, and `initialize` settles the legacy revision of the connection: the one the
client asked for when this server can serve it, else the newest. `server/discover` is modern but
never selects the family.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from beam_mcp.wire import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    UNSUPPORTED_VERSION,
    RpcError,
    excerpt,
    names,
    quoted,
)

MODERN_VERSION = "2026-07-28"
LEGACY_VERSION = "2025-11-25"
# Legacy revisions `initialize` answers with themselves (oldest first); any other gets the newest.
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", LEGACY_VERSION)
# The first revision with structured tool output (`structuredContent`, `outputSchema`).
STRUCTURED_SINCE = "2025-06-18"
SUPPORTED_MODERN = (MODERN_VERSION,)

META_PREFIX = "io.modelcontextprotocol/"
META_VERSION = META_PREFIX + "protocolVersion"
META_CAPABILITIES = META_PREFIX + "clientCapabilities"
META_CLIENT_INFO = META_PREFIX + "clientInfo"
META_LOG_LEVEL = META_PREFIX + "logLevel"
META_SERVER_INFO = META_PREFIX + "serverInfo"

# RFC 5424 order, most verbose first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LOG_RANK = {name: rank for rank, name in enumerate(LOG_LEVELS)}

# Methods that only exist in the legacy family: sent bare after the modern family was selected
# they are cross-family traffic rather than modern requests without metadata.
LEGACY_ONLY = frozenset(("initialize", "notifications/initialized", "ping", "logging/setLevel"))


class Family(Enum):
    NONE = "none"
    LEGACY = "legacy"
    MODERN = "modern"


class Lifecycle(Enum):
    FRESH = "fresh"
    INITIALIZED = "initialized"  # legacy initialize answered, waiting for the notification
    READY = "ready"


@dataclass(frozen=True)
class ModernMeta:
    """Validated per-request metadata. Never retained beyond its request."""

    version: str
    log_level: str | None


@dataclass
class FamilyState:
    """Which family this transport speaks and where the legacy lifecycle stands."""

    family: Family = Family.NONE
    lifecycle: Lifecycle = Lifecycle.FRESH
    revision: str = LEGACY_VERSION  # the legacy revision `initialize` settled

    @property
    def structured(self) -> bool:
        """Whether results carry `structuredContent` (and tools their `outputSchema`)."""
        return self.family is Family.MODERN or has_structured_output(self.revision)

    def cross_family(self, attempted: Family) -> RpcError:
        return RpcError(
            INVALID_REQUEST,
            f"this transport already selected the {self.family.value} protocol family; "
            f"{attempted.value} traffic is not allowed",
        )


def negotiate(requested: str) -> str:
    """The revision an `initialize` proposing `requested` is answered with."""
    return requested if requested in LEGACY_VERSIONS else LEGACY_VERSION


def has_structured_output(revision: str) -> bool:
    return LEGACY_VERSIONS.index(revision) >= LEGACY_VERSIONS.index(STRUCTURED_SINCE)


def is_modern(method: str, params: dict[str, Any]) -> bool:
    if method == "server/discover":
        return True
    meta = params.get("_meta")
    return isinstance(meta, dict) and any(
        isinstance(k, str) and k.startswith(META_PREFIX) for k in meta
    )


def parse_modern_meta(params: dict[str, Any]) -> ModernMeta:
    """Validates the metadata of a modern request; raises the JSON-RPC error to answer."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise _missing("params._meta")
    version = meta.get(META_VERSION)
    if not isinstance(version, str):
        raise _missing(f'_meta["{META_VERSION}"] (a string)')
    if not isinstance(meta.get(META_CAPABILITIES), dict):
        raise _missing(f'_meta["{META_CAPABILITIES}"] (an object)')
    if META_CLIENT_INFO in meta:
        _check_client_info(meta[META_CLIENT_INFO])
    level = meta.get(META_LOG_LEVEL)
    if META_LOG_LEVEL in meta and level not in LOG_RANK:
        raise RpcError(
            INVALID_PARAMS,
            f"invalid log level {quoted(level)}; expected one of {', '.join(LOG_LEVELS)}",
        )
    if version not in SUPPORTED_MODERN:
        raise RpcError(
            UNSUPPORTED_VERSION,
            "Unsupported protocol version",
            {"supported": list(SUPPORTED_MODERN), "requested": excerpt(version)},
        )
    return ModernMeta(version, level if isinstance(level, str) else None)


def _check_client_info(info: Any) -> None:
    ok = (
        isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    )
    if not ok:
        raise RpcError(
            INVALID_PARAMS, f'_meta["{META_CLIENT_INFO}"] must be an object with name and version'
        )


def _missing(what: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"modern MCP requests require {what}")


def check_initialize(params: dict[str, Any]) -> None:
    """Validates legacy `initialize` params before any lifecycle state changes."""
    extra = sorted(
        k for k in params if k not in ("protocolVersion", "capabilities", "clientInfo", "_meta")
    )
    if extra:
        raise RpcError(INVALID_PARAMS, f"initialize does not accept: {names(extra)}")
    if not isinstance(params.get("protocolVersion"), str):
        raise RpcError(INVALID_PARAMS, "initialize requires protocolVersion (a string)")
    if not isinstance(params.get("capabilities"), dict):
        raise RpcError(INVALID_PARAMS, "initialize requires capabilities (an object)")
    info = params.get("clientInfo")
    if not (
        isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    ):
        raise RpcError(INVALID_PARAMS, "initialize requires clientInfo with name and version")
