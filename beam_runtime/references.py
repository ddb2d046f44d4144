"""MCP client registrations that point into runtimes (docs/RUNTIME.md, "References").

A runtime is referenced when a registered server's command, arguments or environment values name
a path under `<root>/versions/<id>`. The stable wrapper `<root>/bin/lean-beam-mcp` references no
runtime. Configs are read with real TOML/JSON parsers; a config that cannot be parsed (nested too
deeply included) blocks exactly the runtimes whose id occurs in its text, and one that cannot be
read at all, or not within the read bound (a hung mount), blocks every runtime (fail closed).

Configs read: each client's user file (Codex, Claude Code, Cursor, OpenCode, Gemini CLI, VS Code
and Mistral Vibe); every project-scoped client file (`.mcp.json`, `.codex/config.toml`,
`.cursor/mcp.json`, `opencode.json(c)`, `.gemini/settings.json`, `.vscode/mcp.json`,
`.vibe/config.toml`) of the projects Claude Code and Codex list in their user files
(`projects` keys), of the projects the MCP server has served (`beam_runtime.served`) and of the
projects a caller adds (doctor: the one it runs in); and every file `lean-beam setup` recorded
writing in `<root>/state/setup/registrations.json`. Every file is touched in a reader process
the command can abandon (`beam_runtime.isolated`), never on the caller's own threads.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from beam_runtime import safe_read, served

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

_ID_END = re.compile(r"[/\s:=,;\"'\\]")


@dataclass(frozen=True)
class ServerEntry:
    """One registered MCP server."""

    client: str
    config: Path
    server_name: str
    command: list[str]  # command and arguments as the client would run them
    env_values: list[str]
    env: dict[str, str] = field(default_factory=dict)  # the entry's own environment
    ids: frozenset[str] | None = None  # the runtimes it points into, when read with a root

    def strings(self) -> list[str]:
        return [*self.command, *self.env_values]


@dataclass(frozen=True)
class ConfigProblem:
    """A client config that exists but could not be read or parsed."""

    client: str
    config: Path
    error: str  # a sentence naming the file: "X does not parse (...)", "could not read X ..."
    text: str | None  # None: unreadable, so it blocks every runtime

    def blocks(self, runtime_id: str) -> bool:
        return self.text is None or runtime_id in self.text


@dataclass(frozen=True)
class ClientConfig:
    client: str
    path: Path


@dataclass
class Registrations:
    """Every server entry and every problem found in the clients' configs."""

    configs: list[ClientConfig]
    entries: list[ServerEntry] = field(default_factory=list)
    problems: list[ConfigProblem] = field(default_factory=list)


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


CLIENTS = ("claude-code", "codex", "cursor", "opencode", "gemini", "vscode", "vibe")
SETUP_RECORD = ("state", "setup", "registrations.json")  # what `lean-beam setup` wrote


def _base(env: Mapping[str, str], var: str, default: Path) -> Path:
    value = env.get(var)
    return Path(value).expanduser() if value else default


def _vscode_user_dir(env: Mapping[str, str]) -> Path:
    home = _home(env)
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Code" / "User"
    return _base(env, "XDG_CONFIG_HOME", home / ".config") / "Code" / "User"


def _opencode_pick(directory: Path, names: tuple[str, str]) -> Path:
    """OpenCode reads `.jsonc` or `.json`: the one that exists, else `.json`."""
    jsonc = directory / names[1]
    return (
        jsonc
        if os.path.lexists(jsonc) and not os.path.lexists(directory / names[0])
        else (directory / names[0])
    )


def user_config(client: str, env: Mapping[str, str]) -> Path:
    """The file where `client` keeps its user-wide MCP servers."""
    home = _home(env)
    if client == "claude-code":
        return _base(env, "CLAUDE_CONFIG_DIR", home) / ".claude.json"
    if client == "codex":
        return _base(env, "CODEX_HOME", home / ".codex") / "config.toml"
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    if client == "opencode":
        directory = _base(env, "OPENCODE_CONFIG_DIR", home / ".config" / "opencode")
        return _opencode_pick(directory, ("opencode.json", "opencode.jsonc"))
    if client == "gemini":
        return home / ".gemini" / "settings.json"
    if client == "vscode":
        return _vscode_user_dir(env) / "mcp.json"
    if client == "vibe":
        return _base(env, "VIBE_HOME", home / ".vibe") / "config.toml"
    raise ValueError(f"unknown client {client}")


def project_config(client: str, project: Path) -> Path:
    """The file of `project` where `client` keeps project-scoped MCP servers."""
    relative = {
        "claude-code": ".mcp.json",
        "codex": ".codex/config.toml",
        "cursor": ".cursor/mcp.json",
        "gemini": ".gemini/settings.json",
        "vscode": ".vscode/mcp.json",
        "vibe": ".vibe/config.toml",
    }
    if client == "opencode":
        return _opencode_pick(project, ("opencode.json", "opencode.jsonc"))
    return project / relative[client]


def user_configs(env: Mapping[str, str]) -> list[ClientConfig]:
    """Each client's user-wide config (OpenCode's under both names)."""
    home = _home(env)
    opencode = _base(env, "OPENCODE_CONFIG_DIR", home / ".config" / "opencode")
    configs = [ClientConfig(c, user_config(c, env)) for c in CLIENTS if c != "opencode"]
    return [
        *configs,
        ClientConfig("opencode", opencode / "opencode.json"),
        ClientConfig("opencode", opencode / "opencode.jsonc"),
    ]


def project_configs(project: Path) -> list[ClientConfig]:
    """Every project-scoped client file of `project` (OpenCode's under both names)."""
    found = [ClientConfig(c, project_config(c, project)) for c in CLIENTS if c != "opencode"]
    return [
        *found,
        ClientConfig("opencode", project / "opencode.json"),
        ClientConfig("opencode", project / "opencode.jsonc"),
    ]


def recorded_configs(root: Path) -> list[ClientConfig]:
    """The files `lean-beam setup` recorded writing under `<root>/state/setup/` (a plain read:
    `read_registrations` runs it in a bounded pool thread)."""
    path = root.joinpath(*SETUP_RECORD)
    try:
        body = json.loads(safe_read.read_regular(str(path), safe_read.CONFIG_CAP))
    except (OSError, ValueError, RecursionError):
        return []  # setup rewrites it whole; a bad one is reported by doctor
    items = body.get("registrations") if isinstance(body, dict) else None
    found = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("client") in CLIENTS and item.get("file"):
            found.append(ClientConfig(str(item["client"]), Path(str(item["file"]))))
    return found


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas -> JSON (strings are left intact)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ValueError("unterminated /* comment")
            i = end + 2
        else:
            if ch in "}]":
                _drop_trailing_comma(out)
            out.append(ch)
            i += 1
    return "".join(out)


def _drop_trailing_comma(out: list[str]) -> None:
    k = len(out) - 1
    while k >= 0 and out[k].isspace():
        k -= 1
    if k >= 0 and out[k] == ",":
        del out[k]


class _BadShape(ValueError):
    pass


def _as_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _entry(
    client: str, config: Path, name: str, server: Any, ids: _Ids | None = None
) -> ServerEntry | None:
    if not isinstance(server, dict):
        return None
    command = [*_as_strings(server.get("command")), *_as_strings(server.get("args"))]
    env: dict[str, str] = {}
    for key in ("env", "environment"):
        values = server.get(key)
        if isinstance(values, dict):
            env.update({str(k): v for k, v in values.items() if isinstance(v, str)})
    strings = [*command, *env.values()]
    found = None if ids is None else frozenset(ids.of(strings))
    return ServerEntry(client, config, name, command, list(env.values()), env, found)


def _named_servers(container: Any, where: str) -> Iterator[tuple[str, Any]]:
    """(name, server) pairs of a name->server table, or of a list of tables with `name`."""
    if container is None:
        return
    if isinstance(container, dict):
        yield from ((str(k), v) for k, v in container.items())
    elif isinstance(container, list):
        for index, server in enumerate(container):
            name = server.get("name") if isinstance(server, dict) else None
            yield (str(name) if name is not None else f"#{index}"), server
    else:
        raise _BadShape(f"`{where}` is neither a table nor a list")


def _servers(client: str, doc: Any) -> Iterator[tuple[str, Any]]:
    if not isinstance(doc, dict):
        raise _BadShape("the document is not an object")
    if client in ("codex", "vibe"):
        yield from _named_servers(doc.get("mcp_servers"), "mcp_servers")
    elif client == "opencode":
        yield from _named_servers(doc.get("mcp"), "mcp")
    elif client == "vscode":
        yield from _named_servers(doc.get("servers"), "servers")
    elif client in ("cursor", "gemini"):
        yield from _named_servers(doc.get("mcpServers"), "mcpServers")
    else:
        yield from _named_servers(doc.get("mcpServers"), "mcpServers")
        projects = doc.get("projects")
        if projects is None:
            return
        if not isinstance(projects, dict):
            raise _BadShape("`projects` is not an object")
        for project, settings in projects.items():
            if isinstance(settings, dict):
                for name, server in _named_servers(settings.get("mcpServers"), "mcpServers"):
                    yield f"{name} (project {project})", server


def _parse(path: Path, text: str) -> Any:
    if path.suffix == ".toml":
        return tomllib.loads(text)
    if path.suffix == ".jsonc" or path.name in ("settings.json", "mcp.json", "opencode.json"):
        return json.loads(strip_jsonc(text))  # these clients accept comments
    return json.loads(text)


class _Found:
    """What reading some configs found: entries, problems and the projects they list."""

    def __init__(self) -> None:
        self.entries: list[ServerEntry] = []
        self.problems: list[ConfigProblem] = []
        self.projects: list[str] = []  # strings: they cross the pipe by the ten thousand


def _first_line(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return "out of memory"
    text = str(exc)
    return text.splitlines()[0] if text else exc.__class__.__name__


def _examine(config: ClientConfig, root: Path | None, lists: bool) -> _Found:
    """Read and parse one config (in a reader process: it may hang on a stuck mount)."""
    found = _Found()
    path = config.path
    if not os.path.lexists(path):
        return found
    try:
        text = safe_read.read_regular(str(path), safe_read.CONFIG_CAP).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problem = ConfigProblem(config.client, path, f"cannot read {path}: {exc}", None)
        found.problems.append(problem)
        return found
    try:
        doc = _parse(path, text)
        servers = list(_servers(config.client, doc))
    except RecursionError:
        error = f"{path} does not parse (nested too deeply)"
        found.problems.append(ConfigProblem(config.client, path, error, text))
        return found
    except (ValueError, _BadShape) as exc:  # TOMLDecodeError and JSONDecodeError included
        error = f"{path} does not parse ({_first_line(exc)})"
        found.problems.append(ConfigProblem(config.client, path, error, text))
        return found
    if lists:
        found.projects += _listed_projects(doc)
    ids = None if root is None else _Ids(root)
    for name, server in servers:
        entry = _entry(config.client, path, name, server, ids)
        if entry is not None:
            found.entries.append(entry)
    return found


def _listed_projects(doc: Any) -> list[str]:
    """Project directories a user config lists (Claude Code's and Codex's `projects` keys)."""
    projects = doc.get("projects") if isinstance(doc, dict) else None
    if not isinstance(projects, dict):
        return []
    return [p for p in projects if isinstance(p, str) and os.path.isabs(p)]


def _read_all(
    configs: list[ClientConfig], root: Path | None, lists: bool, into: Registrations
) -> list[str]:
    """Read every config in a reader process, each bounded (`isolated.run_tasks`); returns
    the projects they list. A config that does not answer is one problem, naming it; the
    other configs of its project are not tried (it already blocks every runtime)."""
    from beam_runtime import isolated

    tasks = [partial(_examine, config, root, lists) for config in configs]
    groups = [str(c.path) if lists else _group_of(c) for c in configs]  # user files stand alone
    outcomes = isolated.run_tasks(tasks, groups)
    projects: list[str] = []
    for index, (config, outcome) in enumerate(zip(configs, outcomes, strict=True)):
        if isinstance(outcome, isolated.Hung):
            if outcome.culprit == index:
                error = f"could not read {config.path} within {outcome.seconds:g} s"
                into.problems.append(ConfigProblem(config.client, config.path, error, None))
        elif isinstance(outcome, BaseException):
            error = f"cannot read {config.path}: {_first_line(outcome)}"
            into.problems.append(ConfigProblem(config.client, config.path, error, None))
        else:
            into.entries += outcome.entries
            into.problems += outcome.problems
            projects += outcome.projects
    return projects


def _served_and_recorded(root: Path) -> tuple[list[str], list[ClientConfig]]:
    return served.load(root), recorded_configs(root)


def read_registrations(
    env: Mapping[str, str], root: Path | None = None, projects: Iterable[Path] = ()
) -> Registrations:
    """Read every supported client config that exists, never stalling (docs/RUNTIME.md).

    First each client's user file (and, with `root`, the projects the MCP server served and the
    files setup recorded), then the project-scoped files present in every project those list,
    plus `projects` (which files are present is one bounded look per project). Every file is
    touched in a reader process (`isolated.run_tasks`), each bounded by `safe_read.TIMEOUT_S`:
    a config that does not answer becomes a problem that blocks every runtime, "could not read
    X within N s". With `root`, each entry carries the runtime ids it points into, resolved in
    the same process.
    """
    from beam_runtime import isolated

    users = user_configs(env)
    found = Registrations(configs=list(users))
    extra: list[ClientConfig] = []
    dirs = [str(p) for p in projects]
    if root is not None:
        (outcome,) = isolated.run_tasks([partial(_served_and_recorded, root)])
        if isinstance(outcome, tuple):
            dirs += outcome[0]
            extra += outcome[1]
    dirs += _read_all(users, root, True, found)
    seen = {(c.client, os.path.abspath(c.path)) for c in users}
    second = []
    for config in _present_project_configs(dirs, found) + extra:
        key = (config.client, os.path.abspath(config.path))
        if key not in seen:
            seen.add(key)
            second.append(config)
    found.configs += second
    _read_all(second, root, False, found)
    return found


def _present_files(project: Path) -> list[ClientConfig]:
    """The project-scoped client files that exist in `project` (none when it is gone)."""
    if not os.path.lexists(project):
        return []
    return [c for c in project_configs(project) if os.path.lexists(c.path)]


def _present_project_configs(dirs: list[str], into: Registrations) -> list[ClientConfig]:
    """The client files present in `dirs`, looked for with one bounded task per project: a user
    file may list tens of thousands of projects, most of them long gone, and each file of each
    project as a task of its own cost a reader round trip apiece. A project that does not answer
    is one problem naming it, and blocks every runtime like any file that does not answer."""
    from beam_runtime import isolated

    projects = list(dict.fromkeys(os.path.abspath(d) for d in dirs))
    tasks = [partial(_present_files, Path(p)) for p in projects]
    outcomes = isolated.run_tasks(tasks, projects)
    present: list[ClientConfig] = []
    for project, outcome in zip(projects, outcomes, strict=True):
        if isinstance(outcome, list):
            present += outcome
            continue
        first = project_configs(Path(project))[0]
        if isinstance(outcome, isolated.Hung):
            error = f"could not read {project} within {outcome.seconds:g} s"
        else:
            error = f"cannot read {project}: {_first_line(outcome)}"
        into.problems.append(ConfigProblem(first.client, first.path, error, None))
    return present


def _group_of(config: ClientConfig) -> str:
    """The project a config belongs to: when one of its files does not answer, the others
    are not tried one timeout after another."""
    path = os.path.abspath(config.path)
    for relative in (".codex/", ".cursor/", ".gemini/", ".vscode/", ".vibe/"):
        head, sep, _tail = path.rpartition("/" + relative)
        if sep:
            return head
    return os.path.dirname(path)


def _versions_dirs(root: Path) -> list[str]:
    dirs = {os.path.normpath(root / "versions"), os.path.realpath(root / "versions")}
    return sorted(dirs)


def referenced_ids(strings: Iterable[str], root: Path) -> set[str]:
    """Runtime ids (directory names under `<root>/versions`) that these strings point into.

    Wherever `/versions/` occurs in a string (a command, an argument, an env value, a path inside
    a shell command), every path that could lead up to it (starting at the string's start or
    after a delimiter: whitespace, quote, `=`, `:`, `;`, `,`, `(`) is resolved; when one resolves
    to this root's `versions/` in any spelling (canonical, or through symlinked ancestors), the
    component after it, up to the next delimiter, is the id. Paths may contain spaces.
    """
    return _Ids(root).of(strings)


class _Ids:
    """`referenced_ids` for one root and many strings: the root's spellings are resolved once,
    and each distinct string once (a config repeats the same commands thousands of times)."""

    def __init__(self, root: Path) -> None:
        self.versions = os.path.realpath(root / "versions")
        self.spelled = set(_versions_dirs(root))
        self.known: dict[str, frozenset[str]] = {}

    def of(self, strings: Iterable[str]) -> set[str]:
        ids: set[str] = set()
        for value in strings:
            found = self.known.get(value)
            if found is None:
                found = self.known[value] = frozenset(self._of_one(value))
            ids.update(found)
        return ids

    def _of_one(self, value: str) -> set[str]:
        ids: set[str] = set()
        for match in _VERSIONS.finditer(value):
            if not _leads_to(value, match.start(), self.spelled, self.versions):
                continue
            rest = value[match.end() :]
            end = _ID_END.search(rest)
            component = rest[: end.start()] if end else rest
            if component not in ("", ".", ".."):
                ids.add(component)
        ids.update(_linked_ids(value, self.versions))
        return ids


_VERSIONS = re.compile(r"/versions/")
_PATH_START = re.compile(r"""[\s'"=:;,(]""")


def _leads_to(value: str, end: int, spelled: set[str], versions: str) -> bool:
    """Whether a path ending at `end` (where `/versions/` starts) names this root's versions."""
    starts = [0, *(m.end() for m in _PATH_START.finditer(value, 0, end))]
    for start in reversed(starts):  # the nearest start first
        head = value[start:end]
        if head.startswith("~"):
            head = os.path.expanduser(head)
        if not head.startswith("/"):
            continue
        directory = head + "/versions"
        if directory in spelled or _resolves_to(directory, versions):
            return True
    return False


def _resolves_to(directory: str, versions: str) -> bool:
    try:
        return os.path.realpath(directory) == versions
    except (OSError, ValueError):
        return False


def _linked_ids(value: str, versions: str) -> set[str]:
    """Ids reached through a link that points into `versions/` (e.g. `~/mylink/bin/...`)."""
    found = set()
    for token in _PATH_START.split(value):
        if token.startswith(("/", "~")):
            real = os.path.realpath(os.path.expanduser(token))
            if real.startswith(versions + os.sep):
                found.add(real[len(versions) + 1 :].split(os.sep)[0])
    return found


@dataclass(frozen=True)
class Reference:
    client: str
    config: Path
    server_name: str | None
    error: str | None = None  # set when the config could not be parsed (fail closed)

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "client": self.client,
            "config": str(self.config),
            "server_name": self.server_name,
        }
        if self.error is not None:
            body["error"] = self.error
        return body

    def describe(self) -> str:
        if self.error is not None:
            return f"{self.client} ({self.error})"
        return f"{self.client}:{self.server_name} in {self.config}"


class ReferenceIndex:
    """Which runtimes of one install root the client registrations hold on to."""

    def __init__(self, root: Path, registrations: Registrations) -> None:
        self.registrations = registrations
        self._by_id: dict[str, list[Reference]] = {}
        for entry in registrations.entries:
            ids = entry.ids if entry.ids is not None else referenced_ids(entry.strings(), root)
            for runtime_id in ids:
                ref = Reference(entry.client, entry.config, entry.server_name)
                self._by_id.setdefault(runtime_id, []).append(ref)

    @classmethod
    def scan(
        cls, root: Path, env: Mapping[str, str] | None = None, projects: Iterable[Path] = ()
    ) -> ReferenceIndex:
        """Every config of the clients, the served projects and `projects`, read bounded."""
        return cls(root, read_registrations(os.environ if env is None else env, root, projects))

    def referenced_by(self, runtime_id: str) -> list[Reference]:
        refs = list(self._by_id.get(runtime_id, []))
        refs += [
            Reference(p.client, p.config, None, p.error)
            for p in self.registrations.problems
            if p.blocks(runtime_id)
        ]
        return refs
