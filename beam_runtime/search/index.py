"""The search index of one key: an SQLite database with an FTS5 table over declarations.

Tables: ``files`` (path, tree, fingerprint, when it was read and a digest of its bytes), ``decls``
(name, kind, signature, line, file) and ``fts`` (name fragments, and the words of the signature
after the name; its rowid is the ``decls`` id). Several server processes may share one
database: it runs in WAL mode so readers never block, and only the holder of ``<db>.lock``
(filelock) writes. Each process keeps two connections: the writer, used by the refresh, and the
reader, used by queries, so a query never waits for a refresh. What another process committed
is noticed through SQLite's ``data_version`` and reloaded. After a large write the full-text
index is merged into one segment (``optimize``), which makes queries cheaper.

A file that is not a database, or whose pages are damaged (garbage, truncated), is discarded and
built again: `open_index` does it when opening fails that way, and any later read or write that
finds damage raises `Corrupt`, after which the caller discards the file (`discard`) and opens
it again. Every method
touches the cache directory: callers run them off the event loop, bounded.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from beam_runtime.search.scan import Declaration
from beam_runtime.search.sources import INDEX_FORMAT, Sources
from beam_runtime.search.tree import Fingerprint

_SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, tree TEXT NOT NULL, ino INTEGER,
    size INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, read_ns INTEGER, digest BLOB);
CREATE TABLE IF NOT EXISTS decls(
    id INTEGER PRIMARY KEY, file INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
    signature TEXT NOT NULL, line INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(name, words, prefix='2 3');
"""
_LOOKUPS = """
CREATE INDEX IF NOT EXISTS decls_file ON decls(file);
CREATE INDEX IF NOT EXISTS decls_name ON decls(name);
"""
_TOKEN = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])|[^\W\d_a-zA-Z]+")
_WRITTEN_NAME = re.compile(r"[^\s(\[{:⦃]*")
_SPACE = re.compile(r"\s")  # a query with spaces is no declaration's name
_CANDIDATES = 4  # rank this many times ``limit`` rows, then put exact names first
_SIDE_FILES = ("-wal", "-shm")
# FTS5 keeps a transaction's new rows in memory up to this many bytes before it writes them
# out as a segment (1 MB by default): a batch of a first build then becomes one segment,
# instead of dozens merged again and again while it is written.
_FTS_HASH_BYTES = 16 << 20


class Corrupt(Exception):
    """The database file is damaged; `open_index` discards and rebuilds it."""


@dataclass(frozen=True)
class Hit:
    name: str
    kind: str
    signature: str
    path: str
    line: int


class Stored(NamedTuple):
    """A file's row: what the index holds for it."""

    id: int
    fingerprint: Fingerprint
    read_ns: int
    digest: bytes


class Update(NamedTuple):
    """One file to write: its fingerprint and read time, the digest of the bytes read, and
    their declarations (``None``: the bytes are those already indexed)."""

    path: str
    tree: str
    fingerprint: Fingerprint
    read_ns: int
    digest: bytes
    declarations: list[Declaration] | None


def digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def name_fragments(name: str) -> str:
    """What a name is found by: its components, and the camel-case pieces of each. A dot
    separates words, so the namespace's fragments (shared by many names) are computed once."""
    head, _, last = name.rpartition(".")
    head_words, head_pieces = _fragments(head)
    if _ALL_PLAIN.fullmatch(last):  # ``add_comm_3``: words, no pieces
        return " ".join([*head_words, *filter(None, last.split("_")), *head_pieces])
    words, pieces = _words_and_pieces(last)
    return " ".join(head_words + words + head_pieces + pieces)


_ALL_PLAIN = re.compile(r"[a-z0-9_]*")  # only plain words, separated by ``_``


def _words_and_pieces(text: str) -> tuple[list[str], list[str]]:
    """The words of ``text`` and the camel-case pieces of those that are not plain."""
    words = _TOKEN.findall(text)
    return words, [piece for word in words if not _plain(word) for piece in _pieces(word)]


_fragments = functools.lru_cache(maxsize=1 << 12)(_words_and_pieces)  # namespaces: lists
# shared between calls, never changed


def _plain(word: str) -> bool:
    """ASCII lower-case letters and digits: one camel-case piece, the word itself."""
    return word.isascii() and (word.islower() or word.isdigit())


@functools.lru_cache(maxsize=1 << 14)  # names share most components (their namespaces)
def _pieces(word: str) -> tuple[str, ...]:
    return tuple(piece for piece in _CAMEL.findall(word) if piece != word)


def statement(decl: Declaration) -> str:
    """The signature without the name it starts with (the name column has its words)."""
    found = _WRITTEN_NAME.match(decl.signature)
    return decl.signature[found.end() :] if found else decl.signature


def query_words(query: str) -> list[str]:
    """The query's distinct words, lower-cased, in order."""
    return list(dict.fromkeys(token.lower() for token in _TOKEN.findall(query)))


def match_expression(query: str) -> str | None:
    """Every word of the query, as a prefix, in the name or the signature; a one-character
    word (``a``, ``n``, ``1``) as a whole word: as a prefix it would match a good part of the
    vocabulary and say nothing."""
    words = query_words(query)
    if not words:
        return None
    return " AND ".join('"' + word + ('"' if len(word) == 1 else '"*') for word in words)


def is_corrupt(error: BaseException) -> bool:
    """SQLite's verdict that a file is not a database or has damaged pages."""
    if not isinstance(error, sqlite3.DatabaseError):
        return False
    name = getattr(error, "sqlite_errorname", "")
    if name:
        return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    text = str(error).lower()
    return any(word in text for word in ("malformed", "not a database", "corrupt"))


@contextlib.contextmanager
def _damage_is_corrupt() -> Iterator[None]:
    try:
        yield
    except sqlite3.DatabaseError as error:
        if is_corrupt(error):
            raise Corrupt(str(error)) from error
        raise


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30.0, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA synchronous=NORMAL")
    return db


class Index:
    """One open database: its writer and reader connections and the rows of ``files``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock_path = str(path) + ".lock"
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self.inode = -1
        try:
            with _damage_is_corrupt():
                self._open()
        except BaseException:
            self.close()
            raise
        self.rows: dict[str, Stored] = {}
        self.reloaded = False  # set by `load` when it read the rows again; the caller resets it
        self.complete = False  # a refresh finished writing (as of the last `load`)
        self._version = -1

    def _open(self) -> None:
        from filelock import FileLock

        self._db = _connect(self.path)
        # Two processes switching a new database to WAL and creating its tables at once can
        # see "database is locked" despite the busy timeout: set-up is serialized.
        # An existing database is only read here: a write would wait for another process's
        # transaction (a batch of a first build can take seconds).
        with FileLock(str(self.path) + ".setup.lock", timeout=60.0):
            db = self._db
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode=WAL")
            if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'fts'").fetchone() is None:
                db.executescript(_SCHEMA_SQL + _LOOKUPS)
                db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (INDEX_FORMAT,))
                with contextlib.suppress(sqlite3.OperationalError):  # an SQLite without it
                    db.execute(
                        "INSERT INTO fts(fts, rank) VALUES ('hashsize', ?)", (_FTS_HASH_BYTES,)
                    )
        self._db.execute("SELECT count(*) FROM files").fetchone()  # reads the root pages
        self._reader = _connect(self.path)
        self.inode = os.stat(self.path).st_ino

    def close(self, wait: bool = True) -> bool:
        """Close both connections; without ``wait``, only when no write or query is in
        progress (a thread stuck in a hung file system may never return)."""
        if not self._write_lock.acquire(blocking=wait):
            return False
        try:
            if not self._read_lock.acquire(blocking=wait):
                return False
            try:
                for db in (self._db, self._reader):
                    if db is not None:
                        with contextlib.suppress(sqlite3.Error):
                            db.close()
                self._db = self._reader = None
            finally:
                self._read_lock.release()
        finally:
            self._write_lock.release()
        return True

    def replaced(self) -> bool:
        """Another process discarded this file and built a new one under the same name."""
        try:
            return os.stat(self.path).st_ino != self.inode
        except OSError:
            return True

    # ------------------------------------------------------------ writer side

    def load(self) -> dict[str, Stored]:
        """The rows of ``files``, read again only when another process has committed since."""
        with self._write_lock, _damage_is_corrupt():
            db = self._writer()
            version = db.execute("PRAGMA data_version").fetchone()[0]
            if version != self._version:
                flag = db.execute("SELECT value FROM meta WHERE key = 'complete'").fetchone()
                self.complete = flag is not None and flag[0] == "1"
                self.rows = {
                    path: Stored(id_, (ino, size, mtime, ctime), read_ns or 0, sha or b"")
                    for id_, path, ino, size, mtime, ctime, read_ns, sha in db.execute(
                        "SELECT id, path, ino, size, mtime_ns, ctime_ns, read_ns, digest FROM files"
                    )
                }
                self._version = version
                self.reloaded = True
            return self.rows

    def write(self, updates: list[Update], removed: list[str], complete: bool) -> None:
        """Apply ``updates`` and drop ``removed`` in one transaction; the caller holds the
        writer lock and has called `load` under it."""
        with self._write_lock, _damage_is_corrupt():
            db = self._writer()
            db.execute("BEGIN IMMEDIATE")
            try:
                self._write(db, updates, removed, complete)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def lookups(self, present: bool) -> None:
        """Drop (before a first build) or create (after it, and after every write: a build
        may have been cut short) the ``decls`` indexes: building them once from the whole
        table is cheaper than updating them row by row."""
        with self._write_lock, _damage_is_corrupt():
            db = self._writer()
            if present:
                db.executescript(_LOOKUPS)
            else:
                db.executescript(
                    "DROP INDEX IF EXISTS decls_file; DROP INDEX IF EXISTS decls_name;"
                )
            self._version = db.execute("PRAGMA data_version").fetchone()[0]

    def optimize(self) -> None:
        """Merge the full-text index into one segment: after a build or a large update,
        queries then read one b-tree per term instead of one per batch."""
        with self._write_lock, _damage_is_corrupt():
            self._writer().execute("INSERT INTO fts(fts) VALUES ('optimize')")
            self._version = self._writer().execute("PRAGMA data_version").fetchone()[0]

    def _write(
        self, db: sqlite3.Connection, updates: list[Update], removed: list[str], complete: bool
    ) -> None:
        rows = self.rows
        gone = [rows[path].id for path in removed if path in rows]
        rescanned = [
            rows[u.path].id for u in updates if u.declarations is not None and u.path in rows
        ]
        _forget(db, gone + rescanned)
        if gone:
            db.executemany("DELETE FROM files WHERE id = ?", ((i,) for i in gone))
        for path in removed:
            rows.pop(path, None)
        next_id = int(db.execute("SELECT coalesce(max(id), 0) FROM decls").fetchone()[0]) + 1
        decl_rows: list[tuple[Any, ...]] = []
        fts_rows: list[tuple[Any, ...]] = []
        for update in updates:
            file_id = self._store_file(db, update)
            if update.declarations:
                for decl in update.declarations:
                    decl_rows.append(
                        (next_id, file_id, decl.name, decl.kind, decl.signature, decl.line)
                    )
                    fts_rows.append((next_id, name_fragments(decl.name), statement(decl)))
                    next_id += 1
        db.executemany(
            "INSERT INTO decls(id, file, name, kind, signature, line) VALUES (?, ?, ?, ?, ?, ?)",
            decl_rows,
        )
        db.executemany("INSERT INTO fts(rowid, name, words) VALUES (?, ?, ?)", fts_rows)
        db.execute(
            "INSERT OR REPLACE INTO meta VALUES ('complete', ?)", ("1" if complete else "0",)
        )
        self.complete = complete
        self._version = db.execute("PRAGMA data_version").fetchone()[0]

    def _store_file(self, db: sqlite3.Connection, update: Update) -> int:
        ino, size, mtime, ctime = update.fingerprint
        old = self.rows.get(update.path)
        values = (update.tree, ino, size, mtime, ctime, update.read_ns, update.digest)
        if old is None:
            cursor = db.execute(
                "INSERT INTO files(tree, ino, size, mtime_ns, ctime_ns, read_ns, digest, path) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*values, update.path),
            )
            file_id = int(cursor.lastrowid or 0)
        else:
            file_id = old.id
            db.execute(
                "UPDATE files SET tree = ?, ino = ?, size = ?, mtime_ns = ?, ctime_ns = ?, "
                "read_ns = ?, digest = ? WHERE id = ?",
                (*values, file_id),
            )
        self.rows[update.path] = Stored(file_id, update.fingerprint, update.read_ns, update.digest)
        return file_id

    def _writer(self) -> sqlite3.Connection:
        if self._db is None:
            raise sqlite3.ProgrammingError("the search index is closed")
        return self._db

    # ------------------------------------------------------------ reader side

    def query(self, query: str, kinds: tuple[str, ...], limit: int) -> list[Hit]:
        expression = match_expression(query)
        if expression is None:
            return []
        if kinds:  # the kind decides before the limit: rank the joined rows
            sql, params = _BY_KIND.format(marks=",".join("?" * len(kinds))), [*kinds]
        else:  # rank the matches alone, then look up only the best
            sql, params = _RANKED, []
        name = query.strip()
        with self._read_lock, _damage_is_corrupt():
            db = self._reader
            if db is None:
                raise sqlite3.ProgrammingError("the search index is closed")
            db.execute("BEGIN")  # both statements see one snapshot
            try:
                rows = db.execute(sql, [expression, *params, limit * _CANDIDATES]).fetchall()
                exact = [] if _SPACE.search(name) else _exact(db, name, kinds)
            finally:
                db.execute("COMMIT")
        return _ranked(name, exact + rows, limit)


_RANKED = (
    "SELECT d.name, d.kind, d.signature, f.path, d.line FROM "
    "(SELECT rowid AS id, bm25(fts, 8.0, 1.0) AS score FROM fts WHERE fts MATCH ? "
    "ORDER BY score LIMIT ?) AS m "
    "JOIN decls d ON d.id = m.id JOIN files f ON f.id = d.file ORDER BY m.score"
)
_BY_KIND = (
    "SELECT d.name, d.kind, d.signature, f.path, d.line FROM fts "
    "JOIN decls d ON d.id = fts.rowid JOIN files f ON f.id = d.file "
    "WHERE fts MATCH ? AND d.kind IN ({marks}) ORDER BY bm25(fts, 8.0, 1.0) LIMIT ?"
)


def _forget(db: sqlite3.Connection, file_ids: list[int]) -> None:
    if not file_ids:
        return
    for start in range(0, len(file_ids), 500):
        marks = ",".join(map(str, file_ids[start : start + 500]))
        owned = f"SELECT id FROM decls WHERE file IN ({marks})"
        db.execute(f"DELETE FROM fts WHERE rowid IN ({owned})")
        db.execute(f"DELETE FROM decls WHERE file IN ({marks})")


def _exact(db: sqlite3.Connection, name: str, kinds: tuple[str, ...]) -> list[Any]:
    rows = db.execute(
        "SELECT d.name, d.kind, d.signature, f.path, d.line FROM decls d "
        "JOIN files f ON f.id = d.file WHERE d.name = ?",
        (name,),
    ).fetchall()
    return [row for row in rows if not kinds or row[1] in kinds]


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


def open_index(path: Path) -> Index:
    """The index at ``path``; a damaged file there is discarded and a new one created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        inode: int | None = os.stat(path).st_ino
    except OSError:
        inode = None
    try:
        return Index(path)
    except Corrupt:
        discard(path, inode)
    return Index(path)


def discard(path: Path, inode: int | None = None) -> None:
    """Remove a damaged database (and its WAL) under the writer lock, unless another process
    already replaced it (``inode``: the file found damaged)."""
    from filelock import FileLock

    with FileLock(str(path) + ".lock", timeout=60.0):
        try:
            current = os.stat(path).st_ino
        except OSError:
            return
        if inode is not None and current != inode:
            return
        for name in (str(path), *(f"{path}{end}" for end in _SIDE_FILES)):
            with contextlib.suppress(OSError):
                os.unlink(name)


def database_path(cache_dir: str, sources: Sources) -> Path:
    return Path(cache_dir) / "search" / f"{sources.key}.sqlite3"


def cache_dir() -> str:
    import platformdirs

    return os.fspath(platformdirs.user_cache_dir("beam"))
