"""What setup wrote, `<root>/state/setup/registrations.json`.

Prune and doctor read it (through `beam_runtime.references.recorded_configs`) to find the
project files setup wrote; remove reads it to find every file to clean and to undo exactly what
setup added. Each registration says which client file holds our entry and, when setup added the
entry (rather than finding one of ours), what it created for it: the file itself
(`created_file`), its missing directories (`created_dirs`), the table or object that holds the
servers (`created_container`) and the text change (`undo`, a `clients.splice.Splice`). `skills`
records the skill files setup created and their directories. The record changes inside the same
transaction as the client files, so it never disagrees with them after a crash.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from beam_install.clients.splice import Splice
from beam_install.journal import FileWrite, read_current, setup_dir


@dataclass(frozen=True)
class Registration:
    client: str
    scope: str
    file: str
    created_file: bool = False  # setup created the file: remove may delete it when empty
    created_dirs: tuple[str, ...] = ()  # directories setup created for it, outermost first
    created_container: bool = False  # setup added the servers table/object for our entry
    splice: Splice | None = None  # the text setup put in, to take out byte for byte

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "client": self.client,
            "scope": self.scope,
            "file": self.file,
            "created_file": self.created_file,
            "created_dirs": list(self.created_dirs),
            "created_container": self.created_container,
        }
        if self.splice is not None:
            body["undo"] = self.splice.to_json()
        return body


@dataclass(frozen=True)
class SkillRecord:
    host: str
    file: str
    created_dirs: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {"host": self.host, "file": self.file, "created_dirs": list(self.created_dirs)}


def record_path(root: Path) -> Path:
    return setup_dir(root) / "registrations.json"


def _text(root: Path) -> str | None:
    try:
        return record_path(root).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _body(root: Path) -> dict[str, Any]:
    text = _text(root)
    try:
        body = json.loads(text) if text else {}
    except (ValueError, RecursionError):
        body = {}  # a damaged record is rewritten whole by the next setup or remove
    return body if isinstance(body, dict) else {}


def _dirs(value: Any) -> tuple[str, ...]:
    items = value if isinstance(value, list) else []
    return tuple(str(d) for d in items if isinstance(d, str) and os.path.isabs(d))


def load(root: Path) -> list[Registration]:
    items = _body(root).get("registrations")
    found = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and {"client", "scope", "file"} <= set(item):
            found.append(
                Registration(
                    str(item["client"]),
                    str(item["scope"]),
                    str(item["file"]),
                    bool(item.get("created_file")),
                    _dirs(item.get("created_dirs")),
                    bool(item.get("created_container")),
                    Splice.from_json(item.get("undo")),
                )
            )
    return found


def load_skills(root: Path) -> list[SkillRecord]:
    items = _body(root).get("skills")
    found = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("host"), str) and item.get("file"):
            found.append(
                SkillRecord(str(item["host"]), str(item["file"]), _dirs(item.get("created_dirs")))
            )
    return found


def key(client: str, file: Path | str) -> tuple[str, str]:
    return client, os.path.abspath(file)


def write(
    root: Path, registrations: list[Registration], skills: list[SkillRecord] | None = None
) -> FileWrite:
    """The record as a transaction write (sorted, one entry per client and file)."""
    unique = {key(r.client, r.file): r for r in registrations}
    rows = [unique[k].to_json() for k in sorted(unique)]
    kept = {s.host: s for s in (load_skills(root) if skills is None else skills)}
    body = {
        "schema": 1,
        "registrations": rows,
        "skills": [kept[h].to_json() for h in sorted(kept)],
    }
    new = json.dumps(body, indent=2) + "\n"
    current = read_current(record_path(root))
    mode = current.mode if current.text is not None else None
    return FileWrite(
        record_path(root), current.text, new, mode, [], current.identity, current.target
    )
