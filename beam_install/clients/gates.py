"""What a client requires before it starts a registered server: its trust and approval gates.

Read from each client's own files, as the client reads them (docs/SETUP.md, "Trust and
approval"), so `lean-beam doctor --client NAME` can say why a registration that works is still
not started, and the exact edit that lets it start:

- Gemini CLI starts no MCP server at all (user-wide ones included) in a folder it does not
  trust: `~/.gemini/trustedFolders.json` maps paths to `TRUST_FOLDER`, `TRUST_PARENT` or
  `DO_NOT_TRUST`, the longest matching path wins, and no match is untrusted. Folder trust can
  be switched off (`security.folderTrust.enabled: false` in its user settings) and
  `GEMINI_CLI_TRUST_WORKSPACE` overrides it.
- Codex ignores a project's `.codex/config.toml` unless its user config has
  `[projects."DIR"] trust_level = "trusted"`, DIR being the git repository's root (or the
  directory itself outside a repository).
- Claude Code starts a project's `.mcp.json` server only once approved: by name or by
  `enableAllProjectMcpServers` in the user's settings (`~/.claude/settings.json`), or, for a
  folder whose trust dialog was accepted, in that project's entry of `~/.claude.json` or its
  `.claude/settings.json` / `.claude/settings.local.json`. A server named in the project's
  `disabledMcpjsonServers` is rejected; any server in its `disabledMcpServers` is disabled there.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from beam_install.clients import project_of
from beam_runtime import safe_read
from beam_runtime.references import ServerEntry, strip_jsonc, tomllib, user_config


@dataclass(frozen=True)
class Gate:
    name: str
    ok: bool
    detail: str
    fix: str | None = None


def gates(
    client: str, entries: Iterable[ServerEntry], cwd: Path, env: Mapping[str, str]
) -> list[Gate]:
    """The gates of `client` that stand between it and these registrations of ours."""
    entries = [e for e in entries if e.client == client]
    if client == "gemini":
        return [gemini_trust(d, env) for d in _dirs(cwd, entries, env, with_cwd=True)]
    if client == "codex":
        return [codex_trust(d, env) for d in _dirs(cwd, entries, env, with_cwd=False)]
    if client == "claude-code":
        return [claude_gate(e, cwd, env) for e in entries]
    return []


def _dirs(
    cwd: Path, entries: list[ServerEntry], env: Mapping[str, str], with_cwd: bool
) -> list[Path]:
    found = [cwd] if with_cwd else []
    for entry in entries:
        project = project_of(entry.client, entry.config, entry.server_name, env)
        if project is not None and project not in found:
            found.append(project)
    return found


def _read(path: Path) -> Any:
    """A JSON (comments allowed) or TOML file; None when missing; ValueError when unusable."""
    try:
        text = safe_read.read_text_bounded(str(path), safe_read.CONFIG_CAP)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc}") from exc
    if path.suffix == ".toml":
        return tomllib.loads(text)
    return json.loads(strip_jsonc(text)) if text.strip() else {}


def _table(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _within(parent: str, child: str) -> bool:
    return child == parent or child.startswith(parent.rstrip(os.sep) + os.sep)


# ---- Gemini CLI ---------------------------------------------------------------------------


def gemini_trusted_folders(env: Mapping[str, str]) -> Path:
    given = env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
    if given:
        return Path(given)
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".gemini" / "trustedFolders.json"


def gemini_trust(directory: Path, env: Mapping[str, str]) -> Gate:
    name = f"gemini trust: {directory}"
    if env.get("GEMINI_RESTRICTED_MODE") == "true" or env.get("GEMINI_CLI_TRUST_WORKSPACE") == (
        "false"
    ):
        return Gate(
            name,
            False,
            "the environment makes Gemini CLI distrust every folder (GEMINI_RESTRICTED_MODE "
            "or GEMINI_CLI_TRUST_WORKSPACE=false): it starts no MCP server",
            "unset GEMINI_RESTRICTED_MODE and GEMINI_CLI_TRUST_WORKSPACE",
        )
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return Gate(name, True, "trusted through GEMINI_CLI_TRUST_WORKSPACE=true")
    settings = user_config("gemini", env)
    try:
        enabled = _table(_read(settings), "security", "folderTrust", "enabled")
    except ValueError as exc:
        return Gate(name, False, f"{settings} cannot be used: {exc}", f"fix {settings}")
    if enabled is False:
        return Gate(name, True, f"folder trust is off ({settings})")
    return _gemini_rules(name, directory, gemini_trusted_folders(env))


def _gemini_rules(name: str, directory: Path, path: Path) -> Gate:
    fix = (
        f'add "{directory}": "TRUST_FOLDER" to {path} (or start gemini in {directory} and '
        "trust the folder)"
    )
    try:
        rules = _read(path) or {}
    except ValueError as exc:
        return Gate(name, False, f"{path} cannot be used ({exc}): Gemini CLI will not start", fix)
    where = os.path.realpath(directory)
    best: tuple[int, str, str] | None = None
    for rule, level in rules.items() if isinstance(rules, dict) else []:
        if level not in ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST"):
            continue
        reach = os.path.dirname(rule) if level == "TRUST_PARENT" else rule
        if _within(os.path.realpath(reach), where) and (best is None or len(rule) > best[0]):
            best = (len(rule), rule, level)
    if best is not None and best[2] != "DO_NOT_TRUST":
        return Gate(name, True, f"trusted by {best[1]!r}: {best[2]} in {path}")
    said = f"marked DO_NOT_TRUST by {best[1]!r}" if best else "not a trusted folder"
    if best is not None:
        fix = f'change the rule for "{best[1]}" in {path} or add "{directory}": "TRUST_FOLDER"'
    return Gate(
        name,
        False,
        f"{said} in {path}: Gemini CLI starts no MCP server there, user-wide ones included",
        fix,
    )


# ---- Codex --------------------------------------------------------------------------------


def _git_root(directory: Path) -> Path | None:
    for candidate in (directory, *directory.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def codex_trust(directory: Path, env: Mapping[str, str]) -> Gate:
    name = f"codex trust: {directory}"
    config = user_config("codex", env)
    key = _git_root(directory) or directory
    fix = (
        f'add [projects."{key}"] with trust_level = "trusted" to {config} (or start codex in '
        f"{key} and trust it)"
    )
    try:
        projects = _table(_read(config), "projects") or {}
    except ValueError as exc:
        return Gate(name, False, f"{config} cannot be used: {exc}", f"fix {config}")
    levels = [_table(projects, k, "trust_level") for k in (str(key), os.path.realpath(key))]
    if "trusted" in levels:
        return Gate(name, True, f"{key} is a trusted project in {config}")
    said = "marked untrusted" if "untrusted" in levels else "not a trusted project"
    return Gate(
        name,
        False,
        f"{key} is {said} in {config}, so Codex ignores {directory / '.codex' / 'config.toml'}",
        fix,
    )


# ---- Claude Code --------------------------------------------------------------------------


def claude_settings(env: Mapping[str, str]) -> Path:
    base = env.get("CLAUDE_CONFIG_DIR")
    home = env.get("HOME") or os.path.expanduser("~")
    return (Path(base).expanduser() if base else Path(home) / ".claude") / "settings.json"


def _project_state(claude_json: Any, directory: Path) -> dict[str, Any]:
    projects = _table(claude_json, "projects")
    for key in (str(directory), os.path.realpath(directory)):
        state = _table(projects, key)
        if isinstance(state, dict):
            return state
    return {}


def _approves(settings: Any, server: str) -> bool:
    if not isinstance(settings, dict):
        return False
    named = settings.get("enabledMcpjsonServers")
    return settings.get("enableAllProjectMcpServers") is True or (
        isinstance(named, list) and server in named
    )


def claude_gate(entry: ServerEntry, cwd: Path, env: Mapping[str, str]) -> Gate:
    server = entry.server_name.split(" (project ")[0]
    project = project_of(entry.client, entry.config, entry.server_name, env)
    claude_json_path = user_config("claude-code", env)
    try:
        claude_json = _read(claude_json_path)
    except ValueError as exc:
        name = f"claude-code approval: {server}"
        return Gate(name, False, str(exc), f"fix {claude_json_path}")
    directory = project or cwd
    state = _project_state(claude_json, directory)
    disabled = state.get("disabledMcpServers")
    if isinstance(disabled, list) and server in disabled:
        return Gate(
            f"claude-code approval: {directory}",
            False,
            f"{server} is disabled for this project ({directory})",
            f"re-enable it with /mcp in Claude Code started in {directory}, or remove "
            f'"{server}" from projects["{directory}"].disabledMcpServers in {claude_json_path}',
        )
    if entry.config.name != ".mcp.json" or project is None:
        return Gate(
            f"claude-code approval: {directory}",
            True,
            f"{server} needs no approval ({'local' if project else 'user'} scope)",
        )
    return _mcp_json_gate(server, project, state, claude_json_path, env)


def _mcp_json_gate(
    server: str,
    project: Path,
    state: dict[str, Any],
    claude_json_path: Path,
    env: Mapping[str, str],
) -> Gate:
    name = f"claude-code approval: {project}"
    rejected = state.get("disabledMcpjsonServers")
    if isinstance(rejected, list) and server in rejected:
        return Gate(
            name,
            False,
            f"the project server {server} of {project / '.mcp.json'} was rejected in Claude Code",
            f'remove "{server}" from projects["{project}"].disabledMcpjsonServers in '
            f"{claude_json_path}",
        )
    settings = claude_settings(env)
    sources: list[tuple[Path, Any]] = [(settings, None)]
    if state.get("hasTrustDialogAccepted") is True:
        sources += [(claude_json_path, state)]
        sources += [
            (project / ".claude" / n, None) for n in ("settings.json", "settings.local.json")
        ]
    for path, loaded in sources:
        try:
            body = loaded if loaded is not None else _read(path)
        except ValueError:
            continue  # Claude Code skips a settings file it cannot read as well
        if _approves(body, server):
            return Gate(name, True, f"the project server {server} is approved in {path}")
    return Gate(
        name,
        False,
        f"the project server {server} of {project / '.mcp.json'} is pending approval: Claude "
        "Code does not start it",
        f'add "enabledMcpjsonServers": ["{server}"] to {settings} (approves it in every '
        f"project), or start claude in {project}, trust the folder and approve {server}",
    )
