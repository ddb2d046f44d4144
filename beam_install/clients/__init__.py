"""The MCP clients `lean-beam setup` knows (docs/SETUP.md): where each keeps its servers, and how.

Paths come from `beam_runtime.references` (the read side prune and doctor use too), so setup
writes exactly the files that protect runtimes from prune. Each client names its file format.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from beam_install.clients.formats import CodexFormat, Format, JsonFormat, VibeFormat
from beam_runtime.references import CLIENTS, project_config, user_config

__all__ = ["CLIENTS", "config_path", "detect", "format_for", "project_of", "skill_host"]

_CLI_NAMES = {
    "claude-code": "claude",
    "codex": "codex",
    "cursor": "cursor",
    "opencode": "opencode",
    "gemini": "gemini",
    "vscode": "code",
    "vibe": "vibe",
}


def format_for(client: str, path: Path) -> Format:
    if client == "codex":
        return CodexFormat()
    if client == "vibe":
        return VibeFormat()
    if client == "opencode":
        return JsonFormat(("mcp",), "opencode", comments=True)  # both names take JSONC
    if client == "vscode":
        return JsonFormat(("servers",), "vscode", comments=True)
    if client == "gemini":
        return JsonFormat(("mcpServers",), "plain", comments=True)
    if client == "cursor":
        return JsonFormat(("mcpServers",), "plain")
    return JsonFormat(("mcpServers",), "claude")


def config_path(client: str, scope: str, env: Mapping[str, str], project: Path) -> Path:
    return user_config(client, env) if scope == "user" else project_config(client, project)


def skill_host(client: str) -> str:
    """Which skill directory serves this client: Claude Code's own, or the shared `~/.agents`."""
    return "claude-code" if client == "claude-code" else "agents"


def detect(env: Mapping[str, str]) -> list[str]:
    """Clients that look installed: their config (or its directory) exists, or their CLI does."""
    path = env.get("PATH", os.defpath)
    found = []
    for client in CLIENTS:
        config = user_config(client, env)
        home = Path(env.get("HOME") or os.path.expanduser("~"))
        shows = os.path.lexists(config) or (config.parent != home and os.path.isdir(config.parent))
        if shows or shutil.which(_CLI_NAMES[client], path=path):
            found.append(client)
    return found


def project_of(client: str, config: Path, server_name: str, env: Mapping[str, str]) -> Path | None:
    """The project a registration belongs to (where its client starts it); None: user-wide.

    A project file (`<dir>/.mcp.json`, `<dir>/.codex/config.toml`, ...) belongs to `<dir>`;
    Claude Code's local servers (`projects.<dir>.mcpServers` in `~/.claude.json`, read as
    `NAME (project DIR)`) to that directory.
    """
    marker = " (project "
    if client == "claude-code" and marker in server_name and server_name.endswith(")"):
        return Path(server_name.split(marker, 1)[1][:-1])
    if os.path.abspath(config) == os.path.abspath(user_config(client, env)):
        return None
    for project in (config.parent, config.parent.parent):
        if os.path.abspath(project_config(client, project)) == os.path.abspath(config):
            return project
    return None
