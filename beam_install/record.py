"""The list of registrations setup wrote, `<root>/state/setup/registrations.json`.

Prune and doctor read it (through `beam_runtime.references.recorded_configs`) to find the
project files setup wrote; remove reads it to find every file to clean. It changes inside the
same transaction as the client files, so it never disagrees with them after a crash.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from beam_install.journal import FileWrite, setup_dir


@dataclass(frozen=True)
class Registration:
    client: str
    scope: str
    file: str
    created_file: bool = False  # setup created the file: remove may delete it when empty

    def to_json(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "scope": self.scope,
            "file": self.file,
            "created_file": self.created_file,
        }


def record_path(root: Path) -> Path:
    return setup_dir(root) / "registrations.json"


def _text(root: Path) -> str | None:
    try:
        return record_path(root).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def load(root: Path) -> list[Registration]:
    text = _text(root)
    try:
        items = json.loads(text)["registrations"] if text else []
    except (ValueError, KeyError, TypeError):
        items = []  # a damaged record is rewritten whole by the next setup or remove
    found = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and {"client", "scope", "file"} <= set(item):
            found.append(
                Registration(
                    str(item["client"]),
                    str(item["scope"]),
                    str(item["file"]),
                    bool(item.get("created_file")),
                )
            )
    return found


def key(client: str, file: Path | str) -> tuple[str, str]:
    return client, os.path.abspath(file)


def write(root: Path, registrations: list[Registration]) -> FileWrite:
    """The record as a transaction write (sorted, one entry per client and file)."""
    unique = {key(r.client, r.file): r for r in registrations}
    rows = [unique[k].to_json() for k in sorted(unique)]
    new = json.dumps({"schema": 1, "registrations": rows}, indent=2) + "\n"
    old = _text(root)
    mode = 0o644 if old is not None else None
    return FileWrite(record_path(root), old, new, mode)
