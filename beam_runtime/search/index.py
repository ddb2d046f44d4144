"""The search index of one key: an SQLite database with an FTS5 table over declarations.

Tables: ``files`` (path, mtime, size), ``decls`` (name, kind, signature, line, file) and ``fts``
(name fragments and signature words; its rowid is the ``decls`` id). A refresh stats every
source of the trees it is given, re-scans files whose mtime or size changed, and drops files of
those trees that vanished. Several
server processes may share one database: it runs in WAL mode so readers never block, and only
the holder of ``<db>.lock`` (filelock) writes. Every method runs in a worker thread; one
connection per process is guarded by a thread lock.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from beam_runtime import safe_read
from beam_runtime.search.scan import Declaration, declarations
from beam_runtime.search.sources import Sources, Stat, lean_files

Progress = Callable[[int, int], None]  # (files scanned, files to scan)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, mtime_ns INTEGER, size INTEGER,
    tree TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decls(
    id INTEGER PRIMARY KEY, file INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
    signature TEXT NOT NULL, line INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS decls_file ON decls(file);
CREATE INDEX IF NOT EXISTS decls_name ON decls(name);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(name, words, prefix='2 3');
"""
_TOKEN = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])|[^\W\d_a-zA-Z]+")
_BATCH = 400
_CANDIDATES = 4  # rank this many times ``limit`` rows, then put exact names first


@dataclass(frozen=True)
class Hit:
    name: str
    kind: str
    signature: str
    path: str
    line: int


def name_fragments(name: str) -> str:
    """What a name is found by: its components, and the camel-case pieces of each."""
    words = _TOKEN.findall(name)
    pieces = [piece for word in words for piece in _CAMEL.findall(word) if piece != word]
    return " ".join(words + pieces)


def match_expression(query: str) -> str | None:
    """Every word of the query, as a prefix, in the name or the signature."""
    tokens = _TOKEN.findall(query)
    if not tokens:
        return None
    return " AND ".join('"' + token.lower() + '"*' for token in tokens)


class Index:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.lock_path = str(path) + ".lock"
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, timeout=30.0, check_same_thread=False)
        # Two processes switching a new database to WAL and creating its tables at once can
        # see "database is locked" despite the busy timeout: set-up is serialized.
        from filelock import FileLock

        with FileLock(str(path) + ".setup.lock", timeout=60.0):
            self._db.execute("PRAGMA journal_mode=WAL")
            with self._db:
                self._db.executescript(_SCHEMA)
        self._db.execute("PRAGMA synchronous=NORMAL")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def complete(self) -> bool:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'complete'").fetchone()
        return row is not None and row[0] == "1"

    def file_count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM files").fetchone()[0])

    def refresh(
        self, sources: Sources, progress: Progress, trees: tuple[str, ...] | None = None
    ) -> int:
        """Bring the files of ``trees`` (default: all) up to date; the number of files indexed.

        The caller holds the writer lock."""
        scanned = trees if trees is not None else sources.trees
        marks = ",".join("?" * len(scanned))
        with self._lock:
            known = {
                path: (file_id, Stat(mtime, size))
                for file_id, path, mtime, size in self._db.execute(
                    f"SELECT id, path, mtime_ns, size FROM files WHERE tree IN ({marks})", scanned
                )
            }
            seen: set[str] = set()
            changed: list[tuple[str, Stat, str]] = []
            for tree in scanned:
                for path, stat in lean_files(tree):
                    if path in seen:
                        continue
                    seen.add(path)
                    old = known.get(path)
                    if old is None or old[1] != stat:
                        changed.append((path, stat, tree))
            gone = [known[path][0] for path in known.keys() - seen]
            self._apply(known, gone, changed, progress)
            return int(self._db.execute("SELECT count(*) FROM files").fetchone()[0])

    def _apply(
        self,
        known: dict[str, tuple[int, Stat]],
        gone: list[int],
        changed: list[tuple[str, Stat, str]],
        progress: Progress,
    ) -> None:
        db = self._db
        with db:
            if gone:
                self._forget(gone)
                db.execute(f"DELETE FROM files WHERE id IN ({','.join(map(str, gone))})")
            if not changed:
                db.execute("INSERT OR REPLACE INTO meta VALUES ('complete', '1')")
        if len(changed) > _BATCH:
            progress(0, len(changed))
        for start in range(0, len(changed), _BATCH):
            batch = changed[start : start + _BATCH]
            with db:
                self._forget([known[path][0] for path, _, _ in batch if path in known])
                for path, stat, tree in batch:
                    self._store(path, stat, tree)
                if start + _BATCH >= len(changed):
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('complete', '1')")
            progress(min(start + _BATCH, len(changed)), len(changed))

    def _forget(self, file_ids: list[int]) -> None:
        if not file_ids:
            return
        marks = ",".join(map(str, file_ids))
        owned = f"SELECT id FROM decls WHERE file IN ({marks})"
        self._db.execute(f"DELETE FROM fts WHERE rowid IN ({owned})")
        self._db.execute(f"DELETE FROM decls WHERE file IN ({marks})")

    def _store(self, path: str, stat: Stat, tree: str) -> None:
        try:
            text = safe_read.read_regular(path, safe_read.SOURCE_CAP).decode("utf-8", "replace")
        except OSError:
            return
        cursor = self._db.execute(
            "INSERT OR REPLACE INTO files(path, mtime_ns, size, tree) VALUES (?, ?, ?, ?)",
            (path, stat.mtime_ns, stat.size, tree),
        )
        file_id = cursor.lastrowid
        found = declarations(text)
        if not found:
            return
        first = self._next_decl_id()
        self._db.executemany(
            "INSERT INTO decls(id, file, name, kind, signature, line) VALUES (?, ?, ?, ?, ?, ?)",
            _decl_rows(first, file_id, found),
        )
        self._db.executemany(
            "INSERT INTO fts(rowid, name, words) VALUES (?, ?, ?)",
            ((first + n, name_fragments(d.name), d.signature) for n, d in enumerate(found)),
        )

    def _next_decl_id(self) -> int:
        row = self._db.execute("SELECT max(id) FROM decls").fetchone()
        return int(row[0] or 0) + 1

    def query(self, query: str, kinds: tuple[str, ...], limit: int) -> list[Hit]:
        expression = match_expression(query)
        if expression is None:
            return []
        where, params = "fts MATCH ?", [expression]
        if kinds:
            where += f" AND d.kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        sql = (
            "SELECT d.name, d.kind, d.signature, f.path, d.line FROM fts "
            "JOIN decls d ON d.id = fts.rowid JOIN files f ON f.id = d.file "
            f"WHERE {where} ORDER BY bm25(fts, 8.0, 1.0) LIMIT ?"
        )
        with self._lock:
            rows = self._db.execute(sql, [*params, limit * _CANDIDATES]).fetchall()
            exact = self._exact(query.strip(), kinds)
        return _ranked(query.strip(), exact + rows, limit)

    def _exact(self, name: str, kinds: tuple[str, ...]) -> list[Any]:
        rows = self._db.execute(
            "SELECT d.name, d.kind, d.signature, f.path, d.line FROM decls d "
            "JOIN files f ON f.id = d.file WHERE d.name = ?",
            (name,),
        ).fetchall()
        return [row for row in rows if not kinds or row[1] in kinds]


def _decl_rows(first: int, file_id: Any, found: Iterable[Declaration]) -> Iterable[tuple]:
    for n, decl in enumerate(found):
        yield first + n, file_id, decl.name, decl.kind, decl.signature, decl.line


def _ranked(query: str, rows: list[Any], limit: int) -> list[Hit]:
    """Exact full names first, then names ending in ``.query``, then FTS rank; no duplicates."""
    suffix = "." + query

    def tier(row: Any) -> int:
        return 0 if row[0] == query else 1 if row[0].endswith(suffix) else 2

    hits: list[Hit] = []
    seen: set[tuple[str, str, int]] = set()
    for row in sorted(rows, key=tier):  # stable: FTS order inside a tier
        key = (row[0], row[3], row[4])
        if key not in seen:
            seen.add(key)
            hits.append(Hit(row[0], row[1], row[2], row[3], row[4]))
    return hits[:limit]


def database_path(cache_dir: str, sources: Sources) -> Path:
    return Path(cache_dir) / "search" / f"{sources.key}.sqlite3"


def cache_dir() -> str:
    import platformdirs

    return os.fspath(platformdirs.user_cache_dir("beam"))
