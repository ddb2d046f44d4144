"""The statement lock: ``<root>/.lean-beam/statements.lock``, read and compared here.

The file is JSON, written by people through ``lean-beam lean lock`` (no MCP tool writes it)::

    {"schema": 1, "statements": {"Demo.main": {"module": "Demo.Basic", "path": "Demo/Basic.lean",
      "statement_sha256": "...", "signature_sha256": "...", "locked_at": "2026-...Z"}}}

``statement_sha256`` hashes the declaration's type as Lean elaborates and prints it (``pp.all``,
no width limit: see ``listing.py``), so notation, ``open``s and implicit arguments cannot hide a
change; ``signature_sha256`` hashes the source text from the declaration's first line to its
``:=`` (whitespace collapsed), for people who want to see that the text moved too. A locked
declaration is ``unchanged`` while its statement hash is equal, ``changed`` otherwise, and
``missing`` when its module no longer has a constant of that name.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import Any

from beam_runtime import safe_read
from beam_runtime.broker.errors import BrokerError

LOCK_FILE = ".lean-beam/statements.lock"
SCHEMA = 1
_ENTRY_KEYS = ("module", "path", "statement_sha256", "signature_sha256", "locked_at")


@dataclass(frozen=True)
class Locked:
    name: str
    module: str
    path: str
    statement_sha256: str
    signature_sha256: str
    locked_at: str


def load(root: str) -> dict[str, Locked]:
    """The lock's entries by name (empty without a lock file)."""
    path = os.path.join(root, LOCK_FILE)
    try:
        data = safe_read.read_regular(path, safe_read.SOURCE_CAP)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise bad_lock(path, f"it cannot be read: {exc.strerror or exc}") from exc
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise bad_lock(path, f"it is not JSON: {exc}") from exc
    return parse(path, body)


def parse(path: str, body: Any) -> dict[str, Locked]:
    if not isinstance(body, dict) or body.get("schema") != SCHEMA:
        raise bad_lock(path, f"it is not a statement lock of schema {SCHEMA}")
    statements = body.get("statements")
    if not isinstance(statements, dict):
        raise bad_lock(path, "its statements member is not an object")
    found: dict[str, Locked] = {}
    for name, entry in statements.items():
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(key), str) for key in _ENTRY_KEYS
        ):
            raise bad_lock(path, f"the entry of {name} lacks one of {', '.join(_ENTRY_KEYS)}")
        found[name] = Locked(name, *(entry[key] for key in _ENTRY_KEYS))
    return found


def bad_lock(path: str, problem: str) -> BrokerError:
    return BrokerError(
        "invalidParams",
        f"{path} cannot be used as the statement lock: {problem}",
        {
            "reason": "badLock",
            "path": path,
            "fix": "restore the file from version control, or write it again with "
            "`lean-beam lean lock FILE...`",
        },
    )


def of_modules(locked: dict[str, Locked], modules: list[str]) -> dict[str, list[Locked]]:
    """The locked entries of each of ``modules``, in name order."""
    found: dict[str, list[Locked]] = {module: [] for module in modules}
    for name in sorted(locked):
        entry = locked[name]
        if entry.module in found:
            found[entry.module].append(entry)
    return found


def status(entry: Locked, statement: str | None) -> str:
    """``unchanged``, ``changed`` or ``missing`` (``statement`` None: no such constant now)."""
    if statement is None:
        return "missing"
    return "unchanged" if statement_hash(statement) == entry.statement_sha256 else "changed"


def statement_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def signature_hash(source: str, first_line: int) -> str:
    """The hash of the declaration's source from its first line (1-based) up to ``:=``."""
    lines = source.replace("\r\n", "\n").split("\n")[max(0, first_line - 1) :]
    text = "\n".join(lines)
    end = _assign(text)
    signature = re.sub(r"\s+", " ", text[: end if end >= 0 else len(text)]).strip()
    return hashlib.sha256(signature.encode("utf-8")).hexdigest()


def _assign(text: str) -> int:
    depth = 0
    for index, char in enumerate(text):
        if char in "([{⦃⟨":
            depth += 1
        elif char in ")]}⦄⟩":
            depth -= 1
        elif depth <= 0 and text.startswith((":=", "\n\n"), index):
            return index
    return -1


def entry_json(entry: Locked) -> dict[str, str]:
    return {key: getattr(entry, key) for key in _ENTRY_KEYS}


def document(entries: dict[str, Locked]) -> dict[str, Any]:
    """The lock file's JSON for ``entries`` (names sorted)."""
    return {
        "schema": SCHEMA,
        "statements": {name: entry_json(entries[name]) for name in sorted(entries)},
    }
