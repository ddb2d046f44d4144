"""How each client's config file stores an MCP server entry: reading, writing, deleting ours.

Two families. JSON files (Claude Code, Cursor, Gemini CLI, VS Code, OpenCode) are edited member
by member with `jsonedit`, so every byte outside our entry stays as it was (JSONC comments
included). TOML files (Codex, Vibe) go through `tomlkit`, which keeps comments and order. A
format never decides ownership or policy; it only says what the entry is and rewrites the text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from beam_install.clients import jsonedit
from beam_runtime.references import strip_jsonc

ENTRY_NAME = "lean-beam"
MARKER_KEY = "LEAN_BEAM_MANAGED"
MARKER_VALUE = "1"
CODEX_STARTUP_TIMEOUT_S = 30
CODEX_TOOL_TIMEOUT_S = 120


@dataclass(frozen=True)
class JsonFormat:
    """A JSON document whose `container` object maps server names to entries."""

    container: tuple[str, ...]
    kind: str  # "claude", "plain", "vscode" or "opencode": the shape of one entry
    comments: bool = False  # JSONC: comments and trailing commas allowed

    @property
    def env_key(self) -> str:
        return "environment" if self.kind == "opencode" else "env"

    def parse(self, text: str) -> Any:
        if not text.strip():
            return {}
        doc = json.loads(strip_jsonc(text) if self.comments else text)
        if not isinstance(doc, dict):
            raise ValueError("the document is not a JSON object")
        parent = jsonedit.get_path(doc, list(self.container[:-1]))
        present = isinstance(parent, dict) and self.container[-1] in parent
        if present and not isinstance(parent[self.container[-1]], dict):
            # null included: setup could not add to it, so remove does not call it empty
            raise ValueError(f"`{'.'.join(self.container)}` is not an object")
        return doc

    def entry(self, doc: Any) -> dict[str, Any] | None:
        servers = jsonedit.get_path(doc, list(self.container)) or {}
        found = servers.get(ENTRY_NAME)
        return found if isinstance(found, dict) or found is None else {"invalid": found}

    def desired(self, command: str) -> dict[str, Any]:
        env = {MARKER_KEY: MARKER_VALUE}
        if self.kind == "opencode":
            return {"type": "local", "command": [command], "enabled": True, "environment": env}
        if self.kind == "plain":
            return {"command": command, "args": [], "env": env}
        return {"type": "stdio", "command": command, "args": [], "env": env}

    def command_of(self, entry: dict[str, Any]) -> list[str]:
        """What the entry runs: its command and arguments ([] without a command, whatever
        its arguments say)."""
        command = entry.get("command")
        args = entry.get("args") if isinstance(entry.get("args"), list) else []
        argv = command if isinstance(command, list) else [command] if command else []
        if not argv or not argv[0]:
            return []
        return [str(a) for a in [*argv, *(args or [])]]

    def env_of(self, entry: dict[str, Any]) -> dict[str, str]:
        env = entry.get(self.env_key)
        return {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}

    def with_entry(self, text: str, entry: dict[str, Any]) -> str:
        if not text.strip():
            doc: dict[str, Any] = {ENTRY_NAME: entry}
            for key in reversed(self.container):
                doc = {key: doc}
            return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        return jsonedit.set_member(text, list(self.container), ENTRY_NAME, entry)

    def without_entry(self, text: str) -> str:
        return jsonedit.delete_member(text, list(self.container), ENTRY_NAME)

    def has_container(self, doc: Any) -> bool:
        return jsonedit.get_path(doc, list(self.container)) is not None

    def without_container(self, text: str) -> str:
        """`text` without the servers object when it is empty (setup created it)."""
        if jsonedit.get_path(self.parse(text), list(self.container)) != {}:
            return text
        return jsonedit.delete_member(text, list(self.container[:-1]), self.container[-1])

    def merged(self, old: dict[str, Any] | None, command: str) -> dict[str, Any]:
        """Our entry, keeping keys the user or the client added to an entry of ours."""
        new = self.desired(command)
        if not old:
            return new
        env = {**self.env_of(old), **new[self.env_key]}
        return {**old, **new, self.env_key: env}


def _toml() -> Any:
    import tomlkit

    return tomlkit


@dataclass(frozen=True)
class CodexFormat:
    """`[mcp_servers.<name>]` tables (Codex)."""

    env_key: str = "env"

    def parse(self, text: str) -> Any:
        doc = _toml().parse(text)
        servers = doc.get("mcp_servers")
        if servers is not None and not isinstance(servers, dict):
            raise ValueError("`mcp_servers` is not a table")
        return doc

    def entry(self, doc: Any) -> dict[str, Any] | None:
        found = (doc.get("mcp_servers") or {}).get(ENTRY_NAME)
        if found is None:
            return None
        return found.unwrap() if hasattr(found, "unwrap") else {"invalid": found}

    def desired(self, command: str) -> dict[str, Any]:
        return {
            "command": command,
            "args": [],
            "env": {MARKER_KEY: MARKER_VALUE},
            "startup_timeout_sec": CODEX_STARTUP_TIMEOUT_S,
            "tool_timeout_sec": CODEX_TOOL_TIMEOUT_S,
        }

    def command_of(self, entry: dict[str, Any]) -> list[str]:
        args = entry.get("args") if isinstance(entry.get("args"), list) else []
        command = entry.get("command")
        if not command:
            return []  # no command: it runs nothing, whatever its arguments say
        return [str(a) for a in [command, *(args or [])]]

    def env_of(self, entry: dict[str, Any]) -> dict[str, str]:
        env = entry.get("env")
        return {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}

    def merged(self, old: dict[str, Any] | None, command: str) -> dict[str, Any]:
        new = self.desired(command)
        if not old:
            return new
        if "args" not in old:  # Codex drops an empty `args` when it rewrites its file
            del new["args"]
        return {**old, **new, "env": {**self.env_of(old), **new["env"]}}

    def _table(self, entry: dict[str, Any]) -> Any:
        tk = _toml()
        table = tk.table()
        for key, value in entry.items():
            if isinstance(value, dict):
                inline = tk.inline_table()
                inline.update(value)
                table[key] = inline
            else:
                table[key] = value
        table.add(tk.nl())
        return table

    def with_entry(self, text: str, entry: dict[str, Any]) -> str:
        """`text` with our entry: an existing one updated key by key; a new one as an inline
        table inside an inline `mcp_servers`, else as a `[mcp_servers.lean-beam]` table (at the
        end of the file when the other servers are dotted keys of the top-level table)."""
        tk = _toml()
        doc = tk.parse(_ended(text))
        servers = doc.get("mcp_servers")
        existing = None if servers is None else servers.get(ENTRY_NAME)
        if existing is not None and hasattr(existing, "unwrap"):
            _update_table(tk, existing, entry)
        elif isinstance(servers, tk.items.InlineTable):
            servers[ENTRY_NAME] = _inline(tk, entry)
        elif servers is not None and _dotted_at_top(doc, "mcp_servers"):
            fresh = tk.document()
            fresh["mcp_servers"] = tk.table(is_super_table=True)
            fresh["mcp_servers"][ENTRY_NAME] = self._table(entry)
            return _ended(text) + "\n" + str(tk.dumps(fresh))
        else:
            if servers is None:
                servers = tk.table(is_super_table=True)
                doc["mcp_servers"] = servers
            servers[ENTRY_NAME] = self._table(entry)
        return str(tk.dumps(doc))

    def without_entry(self, text: str) -> str:
        tk = _toml()
        doc = tk.parse(text)
        servers = doc.get("mcp_servers")
        if servers is None or ENTRY_NAME not in servers:
            return text
        del servers[ENTRY_NAME]
        return str(tk.dumps(doc))

    def has_container(self, doc: Any) -> bool:
        return "mcp_servers" in doc

    def without_container(self, text: str) -> str:
        """`text` without the `mcp_servers` table when it is empty (setup created it)."""
        tk = _toml()
        doc = tk.parse(text)
        servers = doc.get("mcp_servers")
        if servers is None or len(servers) != 0:
            return text
        del doc["mcp_servers"]
        return str(tk.dumps(doc))


def _inline(tk: Any, entry: dict[str, Any]) -> Any:
    """`entry` as an inline table (nested tables inline too)."""
    table = tk.inline_table()
    for key, value in entry.items():
        table[key] = _inline(tk, value) if isinstance(value, dict) else value
    return table


def _dotted_at_top(doc: Any, key: str) -> bool:
    """`key` is made by dotted keys of the top-level table (`mcp_servers.docs.command = ..`):
    a table tomlkit inserts among those lines would take the ones after it as its own."""
    return any(k is not None and k.key == key and k.is_dotted() for k, _v in doc.body)


def _ended(text: str) -> str:
    """A last line gets its newline before a table is appended after it (tomlkit would glue
    the new header to it); remove takes it out again with the rest of what setup added."""
    return text + "\n" if text and not text.endswith("\n") else text


def _update_table(tk: Any, table: Any, entry: dict[str, Any]) -> None:
    """Set the keys of an existing table one by one (comments and other keys stay)."""
    for key in [k for k in table if k not in entry]:
        del table[key]
    for key, value in entry.items():
        if isinstance(value, dict):
            current = table.get(key)
            if hasattr(current, "unwrap") and current.unwrap() == value:
                continue
            inline = tk.inline_table()
            inline.update(value)
            table[key] = inline
        elif table.get(key) != value:
            table[key] = value


@dataclass(frozen=True)
class VibeFormat(CodexFormat):
    """`[[mcp_servers]]` array of tables, each with a `name` (Mistral Vibe)."""

    env_key: str = "env"

    def parse(self, text: str) -> Any:
        doc = _toml().parse(text)
        servers = doc.get("mcp_servers")
        if servers is not None and not isinstance(servers, list):
            raise ValueError("`mcp_servers` is not an array of tables")
        return doc

    def _index(self, doc: Any) -> int | None:
        for index, server in enumerate(doc.get("mcp_servers") or []):
            if isinstance(server, dict) and server.get("name") == ENTRY_NAME:
                return index
        return None

    def entry(self, doc: Any) -> dict[str, Any] | None:
        index = self._index(doc)
        if index is None:
            return None
        found = doc["mcp_servers"][index]
        return dict(found.unwrap()) if hasattr(found, "unwrap") else dict(found)

    def desired(self, command: str) -> dict[str, Any]:
        return {
            "name": ENTRY_NAME,
            "transport": "stdio",
            "command": command,
            "args": [],
            "env": {MARKER_KEY: MARKER_VALUE},
            "startup_timeout_sec": CODEX_STARTUP_TIMEOUT_S,
            "tool_timeout_sec": CODEX_TOOL_TIMEOUT_S,
        }

    def with_entry(self, text: str, entry: dict[str, Any]) -> str:
        tk = _toml()
        doc = tk.parse(_ended(text))
        index = self._index(doc)
        if index is not None:
            _update_table(tk, doc["mcp_servers"][index], entry)
            return str(tk.dumps(doc))
        servers = doc.get("mcp_servers")
        if servers is None:
            servers = tk.aot()
            doc.append("mcp_servers", servers)
        if isinstance(servers, tk.items.Array):  # `mcp_servers = [ {...} ]`: inline, like it
            servers.append(_inline(tk, entry))
        else:
            servers.append(CodexFormat()._table(entry))
        return str(tk.dumps(doc))

    def without_entry(self, text: str) -> str:
        tk = _toml()
        doc = tk.parse(text)
        index = self._index(doc)
        if index is None:
            return text
        servers = doc["mcp_servers"]
        del servers[index]
        if len(servers) == 0 and not isinstance(servers, tk.items.Array):
            del doc["mcp_servers"]  # an empty array of tables is no text at all
        return str(tk.dumps(doc))


Format = JsonFormat | CodexFormat
