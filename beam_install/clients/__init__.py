"""The MCP clients `lean-beam setup` knows (docs/SETUP.md): where each keeps its servers, and how.

Paths come from `beam_runtime.references` (the read side prune and doctor use too), so setup
writes exactly the files that protect runtimes from prune. Each client names its file format.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from functools import partial
from pathlib import Path

from beam_install.clients.formats import CodexFormat, Format, JsonFormat, VibeFormat
from beam_runtime.references import CLIENTS, project_config, user_config

__all__ = [
    "CLIENTS",
    "config_path",
    "config_path_spelled",
    "detect",
    "format_for",
    "project_of",
    "skill_host",
]

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
    """The file to edit (OpenCode's `.jsonc` when only that one exists: this looks)."""
    return user_config(client, env) if scope == "user" else project_config(client, project)


def config_path_spelled(client: str, scope: str, env: Mapping[str, str], project: Path) -> Path:
    """`config_path` without touching the file system (OpenCode: the `.json` name), for
    messages about a file system that does not answer."""
    if client != "opencode":
        return config_path(client, scope, env, project)
    if scope == "user":
        base = env.get("OPENCODE_CONFIG_DIR")
        home = Path(env.get("HOME") or os.path.expanduser("~"))
        directory = Path(base).expanduser() if base else home / ".config" / "opencode"
        return directory / "opencode.json"
    return project / "opencode.json"


def skill_host(client: str) -> str:
    """Which skill directory serves this client: Claude Code's own, or the shared `~/.agents`."""
    return "claude-code" if client == "claude-code" else "agents"


def _installed(client: str, env: Mapping[str, str]) -> bool:
    config = user_config(client, env)
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    shows = os.path.lexists(config) or (config.parent != home and os.path.isdir(config.parent))
    return shows or shutil.which(_CLI_NAMES[client], path=env.get("PATH", os.defpath)) is not None


def detect(env: Mapping[str, str]) -> list[str]:
    """Clients that look installed: their config (or its directory) exists, or their CLI does.

    Each look is bounded: a client whose config does not answer (a hung mount) counts as
    installed, so that setup then names the file it could not read."""
    from beam_runtime import isolated

    outcomes = isolated.run_tasks([partial(_installed, client, env) for client in CLIENTS])
    return [c for c, seen in zip(CLIENTS, outcomes, strict=True) if seen is not False]


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
