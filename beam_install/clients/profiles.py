"""How each MCP client opens a connection: the `initialize` it sends and the answers it accepts.

`lean-beam doctor --client NAME` speaks to a registered server exactly as that client does, so a
server the client would drop fails there too. The profiles of Claude Code, Codex, Gemini CLI and
OpenCode were read from the real clients (the releases named in `seen`): each was pointed at a
logging stdio server, and what it sent is copied here; the revisions each accepts come from the
MCP SDK it bundles. Cursor, VS Code and Mistral Vibe were not observed: doctor speaks as a
generic client for them, proposing `2025-06-18` and accepting only that same revision back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# What the TypeScript SDK that Claude Code and OpenCode bundle accepts in an `initialize` answer.
_TS_SDK_ACCEPTS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07")


@dataclass(frozen=True)
class ClientProfile:
    client: str
    title: str  # how the client is called in a report
    protocol: str  # the revision its `initialize` proposes
    capabilities: dict[str, Any]
    client_info: dict[str, str]
    accepts: tuple[str, ...] | None  # revisions it keeps a connection with; None: any
    modern: str | None = None  # tries `server/discover` with this revision first
    seen: str = ""  # the release it was read from; empty for the generic stand-in

    def initialize(self) -> dict[str, Any]:
        return {
            "protocolVersion": self.protocol,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        }

    def modern_meta(self) -> dict[str, Any]:
        """The `_meta` of a modern request (its protocol, capabilities and client info)."""
        prefix = "io.modelcontextprotocol/"
        return {
            prefix + "protocolVersion": self.modern,
            prefix + "clientInfo": self.client_info,
            prefix + "clientCapabilities": self.capabilities,
        }

    def accepts_answer(self, revision: Any) -> bool:
        return self.accepts is None or revision in self.accepts

    def known(self) -> str:
        return ", ".join(self.accepts or ("any",))


def generic(client: str, title: str) -> ClientProfile:
    """A client that was not observed: the spec's strict reading, the same revision back."""
    return ClientProfile(
        client,
        title,
        "2025-06-18",
        {},
        {"name": "lean-beam-doctor", "version": "1"},
        ("2025-06-18",),
    )


PROFILES: dict[str, ClientProfile] = {
    "claude-code": ClientProfile(
        "claude-code",
        "Claude Code",
        "2025-11-25",
        {"roots": {"listChanged": True}, "elicitation": {"form": {}, "url": {}}},
        {"name": "claude-code", "title": "Claude Code", "version": "2.1.328"},
        _TS_SDK_ACCEPTS,
        modern="2026-07-28",
        seen="2.1.328",
    ),
    "codex": ClientProfile(
        "codex",
        "Codex",
        "2025-06-18",
        {"experimental": {"codex/auth-change": {}}, "elicitation": {"form": {}, "url": {}}},
        {"name": "codex-mcp-client", "title": "Codex", "version": "0.169.0"},
        None,  # it went on (to tools/list) after every answer it was given, unknown ones too
        seen="0.169.0",
    ),
    "gemini": ClientProfile(
        "gemini",
        "Gemini CLI",
        "2025-06-18",
        {"roots": {"listChanged": True}},
        {"name": "gemini-cli-mcp-client", "version": "0.61.0"},
        ("2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"),
        seen="0.61.0",
    ),
    "opencode": ClientProfile(
        "opencode",
        "OpenCode",
        "2025-11-25",
        {"roots": {}},
        {"name": "opencode", "version": "1.18.33"},
        _TS_SDK_ACCEPTS,
        seen="1.18.33",
    ),
    "cursor": generic("cursor", "Cursor"),
    "vscode": generic("vscode", "VS Code"),
    "vibe": generic("vibe", "Mistral Vibe"),
}
GENERIC = generic("generic", "an MCP client")


def profile_for(client: str) -> ClientProfile:
    return PROFILES[client]
