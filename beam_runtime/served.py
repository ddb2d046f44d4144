"""The projects the MCP server has served: `<root>/state/projects.json` (docs/RUNTIME.md).

Every workspace root a workspace-bound tool call accepted is remembered, so that `runtime
list`, `runtime prune` and `doctor` also read the project-scoped client files (`.mcp.json`,
`.codex/config.toml`, ...) of projects that no client lists in its own user file.

The file is `{"schema": 1, "projects": [{"root": "/abs/dir", "last_used": "<UTC>Z"}]}`, most
recently used first, at most `MAX_PROJECTS` rows. `load` reads it for the references (any
damage reads as no projects: the record only ever adds protection).

This is the one file under an install root that `beam_install` does not write: the MCP server
writes it, through `Recorder` here and nowhere else. `Recorder.note` runs on the server's event
loop and never blocks: it drops a root it wrote in the last `REFRESH_S`, else puts it in a
bounded pending set and wakes one daemon thread. That thread resolves the install root (the
runtime the server runs from, else `BEAM_INSTALL_ROOT`; none without a marker and a `state/`),
takes `state/projects.lock` (flock, waiting at most `LOCK_WAIT_S`, else it tries again with the
next note), removes temporaries that killed writers left, merges, writes
`.projects.json.<pid>.tmp`, fsyncs it and renames it over the file. Any failure is dropped: the
record is best effort and a tool call never waits for it.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from beam_runtime import safe_read
from beam_runtime.layout import MARKER_NAME, ROOT_ENV, STATE_TMP_PREFIX

FILE_NAME = "projects.json"
LOCK_NAME = "projects.lock"
TMP_PREFIX = STATE_TMP_PREFIX  # `.projects.json.<pid>.tmp` while a writer holds the lock
MAX_PROJECTS = 500
MAX_PENDING = 1000
REFRESH_S = 60.0  # a root recorded this recently is not written again
LOCK_WAIT_S = 2.0
CAP = 4 << 20


def record_path(root: Path) -> Path:
    return root / "state" / FILE_NAME


def parse(text: str) -> list[tuple[str, str]]:
    """(root, last_used) rows of a record's text; malformed rows or a damaged file give none."""
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        return []
    rows = body.get("projects") if isinstance(body, dict) else None
    found = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        project, used = row.get("root"), row.get("last_used")
        if isinstance(project, str) and os.path.isabs(project) and isinstance(used, str):
            found.append((project, used))
    return found[:MAX_PROJECTS]


def load(root: Path) -> list[str]:
    """The served project roots, most recent first (nothing when the record is missing or bad).

    A plain read: callers that must not stall run it in a reader process."""
    try:
        text = safe_read.read_regular(str(record_path(root)), CAP).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return [project for project, _used in parse(text)]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def merge(old: list[tuple[str, str]], new: dict[str, str]) -> list[tuple[str, str]]:
    """Rows of both, each root once with its latest use, most recent first, bounded."""
    latest: dict[str, str] = {}
    for project, used in [*old, *new.items()]:
        if project not in latest or used > latest[project]:
            latest[project] = used
    rows = sorted(latest.items(), key=lambda row: (row[1], row[0]), reverse=True)
    return rows[:MAX_PROJECTS]


def render(rows: list[tuple[str, str]]) -> str:
    projects = [{"root": project, "last_used": used} for project, used in rows]
    return json.dumps({"schema": 1, "projects": projects}, indent=1) + "\n"


def install_root() -> Path | None:
    """The install root whose record the server writes, or None (a development copy alone)."""
    from beam_runtime.identity import locate_runtime

    location = locate_runtime()
    raw = str(location.root) if location is not None else os.environ.get(ROOT_ENV)
    if not raw or not os.path.isabs(raw):
        return None
    root = Path(raw)
    if os.path.isfile(root / MARKER_NAME) and os.path.isdir(root / "state"):
        return root
    return None


def _locked(fd: int, seconds: float) -> bool:
    import fcntl

    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)


def write(root: Path, new: dict[str, str]) -> bool:
    """Merge `new` ({root: last_used}) into the record; False when the lock stayed busy."""
    state = root / "state"
    fd = os.open(state / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        if not _locked(fd, LOCK_WAIT_S):
            return False
        for name in os.listdir(state):
            if name.startswith(TMP_PREFIX):  # only a dead writer leaves one while we hold the lock
                with contextlib.suppress(OSError):
                    os.unlink(state / name)
        try:
            old = parse(record_path(root).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            old = []
        tmp = state / f"{TMP_PREFIX}{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(render(merge(old, new)))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, record_path(root))
        return True
    finally:
        os.close(fd)


class Recorder:
    """Remembers served roots for the MCP server without ever making a call wait."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pending: dict[str, str] = {}
        self._recent: dict[str, float] = {}  # root -> monotonic time it was last handed over
        self._thread: threading.Thread | None = None
        self._root: Any = ...  # unresolved until the thread needs it

    def note(self, project: str) -> None:
        """Called on the event loop for each accepted workspace root: O(1), no I/O."""
        now = time.monotonic()
        last = self._recent.get(project)
        if last is not None and now - last < REFRESH_S:
            return
        with self._lock:
            if len(self._pending) >= MAX_PENDING and project not in self._pending:
                return
            self._pending[project] = _now()
            if len(self._recent) >= 2 * MAX_PROJECTS:
                self._recent.clear()
            self._recent[project] = now
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="served", daemon=True)
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            with self._lock:
                batch, self._pending = self._pending, {}
            if not batch:
                continue
            try:
                if self._root is ...:
                    self._root = install_root()
                if self._root is None:
                    continue
                if not write(self._root, batch):
                    self._requeue(batch)
            except Exception:  # best effort: a record never costs the server anything
                continue

    def _requeue(self, batch: dict[str, str]) -> None:
        with self._lock:
            for project, used in batch.items():
                self._recent.pop(project, None)
                if len(self._pending) < MAX_PENDING:
                    self._pending.setdefault(project, used)
