"""One open document ("file worker"): versions, elaboration with prefix reuse, and reporting.

Elaboration runs on a thread per document version. Results of a command are cached under a key
covering the header and every command up to it, so an unchanged prefix is not paid for again.
Notifications for a version that has been superseded are dropped, as Lean's output channel does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.fake_lean import imports
from tests.fake_lean.elab import CmdResult, Env, elaborate
from tests.fake_lean.model import ERROR, INFORMATION, Diag
from tests.fake_lean.source import (
    Command,
    Pos,
    apply_change,
    eof,
    lsp_pos,
    lsp_range,
    normalize,
    split_commands,
    split_lines,
)

if TYPE_CHECKING:
    from tests.fake_lean.watchdog import Server

WORKER_SCRIPT = Path(__file__).resolve().parent / "worker.py"
BALLAST = ("FAKE_LEAN_WORKER_PRIVATE_MB", "FAKE_LEAN_WORKER_SHARED_MB")


@dataclass
class Snapshot:
    gen: int
    version: int
    text: str
    lines: list[str]
    header_end: int
    commands: list[Command]
    header_done: bool = False
    fatal: bool = False
    header_diags: list[Diag] = field(default_factory=list)
    results: list[CmdResult] = field(default_factory=list)
    env: Env = field(default_factory=Env)
    done: bool = False
    reported: bool = False
    blocked: bool = False
    sent: int = 0
    publishes: int = 0
    crashed: bool = False

    def command_index(self, line: int) -> int:
        """Index of the command holding ``line`` (-1: header or before the first command)."""
        index = -1
        for number, command in enumerate(self.commands):
            if command.start <= line:
                index = number
            else:
                break
        return index

    def elaborated(self, line: int) -> bool:
        return self.done or self.command_index(line) < len(self.results)


class Document:
    def __init__(self, server: Server, uri: str, version: int, text: str, mode: str) -> None:
        self.server = server
        self.uri = uri
        self.version = version
        self.text = normalize(text)
        self.build_mode = mode
        self.gen = 0
        self.closed = False
        self.crashed: int | None = None
        self.crashed_once: set[str] = set()
        self.cache: dict[str, CmdResult] = {}
        self.sticky: list[Diag] = []
        self.proc: subprocess.Popen[bytes] | None = None
        self.header = ""
        self.fresh_elaborations = 0
        self.worker_gen = 0  # bumped whenever the worker process is replaced (RPC sessions die)
        self.restarting = False
        # (header, worker generation) and what that worker loaded: Lean reads imports once per
        # worker process, so a rebuilt import is only seen by a new worker.
        self.loaded_imports: tuple[tuple[str, int], imports.HeaderResult] | None = None
        self.snap = self._new_snapshot()

    # lifecycle (all called with the server lock held)

    def start(self) -> None:
        self._spawn_worker()
        self._launch(self.snap)

    def change(self, version: int, changes: list[dict[str, Any]]) -> None:
        for change in changes:
            self.text = apply_change(self.text, change)
        self.version = version
        old_header = self.header
        self.snap = self._new_snapshot()
        if self.restarting:
            return  # the restart under way elaborates the newest text
        header_changed = self.header != old_header
        if header_changed and self.crashed is None and self.server.settings.restart_drops:
            self._exit_for_new_header()
            return
        if self.crashed is not None or header_changed:
            self._restart_worker()
        self._launch(self.snap)

    def _exit_for_new_header(self) -> None:
        """An older Lean: the worker sleeps 200 ms and exits with code 2; the watchdog starts a
        new one for the current text, and whatever was queued at the old worker is lost."""
        self.restarting = True
        self.server._eprint(f"[{self.uri}] imports changed: worker exits with code 2")
        timer = threading.Timer(0.2, self._restart_after_exit)
        timer.daemon = True
        timer.start()

    def _restart_after_exit(self) -> None:
        with self.server.cond:
            self.restarting = False
            if self.closed:
                return
            self.server.drop_pending(self.uri)
            self._restart_worker()
            self._launch(self.snap)

    def close(self) -> None:
        self.closed = True
        self.gen += 1
        self._kill_worker()

    def crash(self, code: int) -> None:
        self.crashed = code
        self.cache.clear()
        self.worker_gen += 1
        self._kill_worker()

    def _restart_worker(self) -> None:
        self.worker_gen += 1
        self._kill_worker()
        self.crashed = None
        self.cache.clear()
        self.sticky = []
        self._spawn_worker()
        self.server.notify_progress(self, self.snap, [self._whole(self.snap, 1)])

    def _new_snapshot(self) -> Snapshot:
        self.gen += 1
        lines = split_lines(self.text)
        header_end, commands = split_commands(lines)
        self.header = "\n".join(lines[:header_end])
        return Snapshot(self.gen, self.version, self.text, lines, header_end, commands)

    def _launch(self, snap: Snapshot) -> None:
        thread = threading.Thread(target=self._elaborate, args=(snap,), daemon=True)
        thread.start()

    # worker processes

    def _spawn_worker(self) -> None:
        if not self.server.settings.spawn_workers:
            return
        try:
            ballast = any(os.environ.get(name) for name in BALLAST)
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(WORKER_SCRIPT), "--worker", self.uri],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE if ballast else subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as error:
            sys.stderr.write(f"[{self.uri}] could not start fake worker: {error}\n")
            return
        watch = threading.Thread(target=self._watch_worker, args=(self.proc,), daemon=True)
        watch.start()

    def _worker_ready(self, snap: Snapshot) -> bool:
        """With a ballast, elaboration waits until the worker holds it, as Lean's worker loads
        its imports before it elaborates; a worker that died on the way is a crash."""
        proc = self.proc
        if proc is None or proc.stdout is None or getattr(proc, "ready", False):
            return True
        if proc.stdout.readline():
            proc.ready = True  # type: ignore[attr-defined]
            return True
        self.server.worker_crashed(self, snap, proc.wait() or 1)
        return False

    def _watch_worker(self, proc: subprocess.Popen[bytes]) -> None:
        """A worker process that fails on its own (it ran out of memory under an address-space
        limit) is a crashed worker, as when Lean's worker dies: the file's requests fail."""
        code = proc.wait()
        if code > 0 and self.proc is proc and not self.closed:
            self.server.worker_crashed(self, self.snap, code)

    def _kill_worker(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.kill()
        except OSError:
            pass
        threading.Thread(target=proc.wait, daemon=True).start()

    def worker_pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    # elaboration

    def _stale(self, snap: Snapshot) -> bool:
        return self.closed or self.gen != snap.gen or self.crashed is not None

    def _elaborate(self, snap: Snapshot) -> None:
        if not self._worker_ready(snap):
            return
        server = self.server
        started = time.monotonic()
        clock = _Clock(started)
        if not self._header(snap, clock):
            return
        with server.cond:
            env = Env(decls=dict(snap.env.decls))
        doc_comment: str | None = None
        for command in snap.commands:
            result = self.cache.get(command.key)
            if result is None:
                result = self._run_command(snap, command, env, doc_comment, clock)
                if result is None:
                    return
            with server.cond:
                if self._stale(snap):
                    return
                snap.results.append(result)
                for decl in result.decls:
                    env.decls[decl.name] = decl
                env.namespaces, env.opens = result.namespaces, result.opens
                env.variables = result.variables
                snap.env = env
                server.cond.notify_all()
                if snap.blocked and result.diags:
                    server.publish(self, snap)
            doc_comment = command.text if command.text.startswith("/--") else None
        self._finish(snap, clock)

    def _run_command(
        self, snap: Snapshot, command: Command, env: Env, doc: str | None, clock: _Clock
    ) -> CmdResult | None:
        settings = self.server.settings
        self.fresh_elaborations += 1
        result = elaborate(command, snap.lines, env, settings.texts, self.uri, _doc_text(doc))
        cost = settings.cmd_delay_ms + result.sleep_ms * settings.sleep_scale
        if not self._pause(snap, cost / 1000.0, _busy_pos(command), clock):
            return None
        if result.crash is not None:
            kind, code = result.crash
            if kind == "crash" or command.text not in self.crashed_once:
                self.crashed_once.add(command.text)
                self.server.worker_crashed(self, snap, code)
                return None
        if result.die:
            sys.stderr.write("fake Lean server: scripted abrupt exit (#fake_die)\n")
            sys.stderr.flush()
            os._exit(1)
        self.cache[command.key] = result
        return result

    def _pause(self, snap: Snapshot, seconds: float, where: Pos, clock: _Clock) -> bool:
        """Spend ``seconds`` of elaboration time, reporting progress; False if superseded."""
        server = self.server
        deadline = time.monotonic() + seconds
        while True:
            with server.cond:
                if self._stale(snap):
                    return False
                self._report_busy(snap, where, clock)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return True
                server.cond.wait(min(remaining, 0.05))

    def _report_busy(self, snap: Snapshot, where: Pos, clock: _Clock) -> None:
        now = time.monotonic()
        delay = self.server.settings.report_delay_ms / 1000.0
        if now - clock.started < delay:
            return
        if not snap.blocked:
            snap.blocked = True
            self.server.notify_progress(self, snap, [self._busy(snap, where)])
            self.server.publish(self, snap)
            clock.mark(where, now)
        elif where != clock.where or now - clock.last >= 0.5:
            self.server.notify_progress(self, snap, [self._busy(snap, where)])
            clock.mark(where, now)

    def _header(self, snap: Snapshot, clock: _Clock) -> bool:
        server = self.server
        modules = imports.imported_modules(snap.lines, snap.header_end)
        with server.cond:
            open_texts = {doc.uri: doc.text for doc in server.docs.values()}
        key = ("\n".join(snap.lines[: snap.header_end]), self.worker_gen)
        loaded = self.loaded_imports
        if loaded is not None and loaded[0] == key:
            result, fresh = loaded[1], False  # a worker loads its imports once
        else:
            result, fresh = (
                imports.process_header(
                    server.settings, server.root, self.uri, modules, self.build_mode, open_texts
                ),
                True,
            )
            if result.fatal_message is None:
                self.loaded_imports = (key, result)
        lake_setup = fresh and server.settings.under_lake and result.local_modules
        if lake_setup and not self._setup_lines(snap, result.local_modules, clock):
            return False
        with server.cond:
            if self._stale(snap):
                return False
            snap.header_done = True
            snap.env = Env(decls=dict(result.decls))
            if server.settings.stale_notice and result.local_modules and not self.sticky:
                notice = Diag(Pos(0, 0), eof(snap.lines), INFORMATION, imports.SHOULD_REBUILD)
                self.sticky.append(notice)
            if result.fatal_message is not None:
                end = eof(snap.lines)
                snap.header_diags = [Diag(Pos(0, 0), end, ERROR, result.fatal_message)]
                snap.fatal = True
                snap.done = True
                # Lean's reportSnapshots: the fatal progress first, then the publish.
                server.notify_progress(self, snap, [self._whole(snap, 2)])
                delay = server.settings.fatal_publish_delay_ms / 1000.0
                if delay > 0:
                    server.cond.wait(delay)  # lets a client act on the progress alone
                if self._stale(snap):
                    return False
                server.publish(self, snap)
                snap.reported = True
            server.cond.notify_all()
        return not snap.fatal

    def _setup_lines(self, snap: Snapshot, modules: list[str], clock: _Clock) -> bool:
        """Lake's build log lines during ``setup-file``, each published as its own diagnostic."""
        server = self.server
        total = len(modules) + 1
        for index, module in enumerate(modules, start=1):
            if not self._pause(snap, server.settings.setup_delay_ms / 1000.0, Pos(0, 0), clock):
                return False
            line = f"✔ [{index}/{total}] Built {module}"
            with server.cond:
                if self._stale(snap):
                    return False
                diag = Diag(Pos(0, 0), eof(snap.lines), INFORMATION, line)
                server.send_diagnostics(self, snap, [diag])
        with server.cond:
            if self._stale(snap):
                return False
            server.send_diagnostics(self, snap, [])
        return True

    def _finish(self, snap: Snapshot, clock: _Clock) -> None:
        server = self.server
        with server.cond:
            if self._stale(snap):
                return
            snap.done = True
            if snap.blocked:
                server.publish(self, snap)
                server.notify_progress(self, snap, [])
            else:
                server.notify_progress(self, snap, [])
                server.publish(self, snap)
            snap.reported = True
            pairs = zip(snap.commands, snap.results, strict=False)
            self.cache = {cmd.key: res for cmd, res in pairs}
            server.cond.notify_all()

    # notification payloads

    def _busy(self, snap: Snapshot, where: Pos) -> dict[str, Any]:
        return {"range": lsp_range(snap.lines, where, eof(snap.lines)), "kind": 1}

    def _whole(self, snap: Snapshot, kind: int) -> dict[str, Any]:
        return {"range": lsp_range(snap.lines, Pos(0, 0), eof(snap.lines)), "kind": kind}

    def all_diags(self, snap: Snapshot) -> list[Diag]:
        out = list(self.sticky) + list(snap.header_diags)
        for result in snap.results:
            out.extend(result.diags)
        return out


@dataclass
class _Clock:
    started: float
    where: Pos | None = None
    last: float = 0.0

    def mark(self, where: Pos, now: float) -> None:
        self.where, self.last = where, now


def _busy_pos(command: Command) -> Pos:
    for offset, line in enumerate(command.text.split("\n")):
        stripped = line.strip()
        if stripped.startswith("sleep "):
            return Pos(command.start + offset, len(line) - len(line.lstrip()))
    return Pos(command.start, 0)


def _doc_text(doc: str | None) -> str | None:
    if doc is None:
        return None
    return doc.removeprefix("/--").removesuffix("-/").strip()


def diag_json(lines: list[str], diag: Diag) -> dict[str, Any]:
    """Lean's wire shape: ``range`` cut to one line for multi-line spans, plus ``fullRange``."""
    end = diag.end if diag.end.line == diag.start.line else Pos(diag.start.line + 1, 0)
    out: dict[str, Any] = {
        "range": {"start": lsp_pos(lines, diag.start), "end": lsp_pos(lines, end)},
        "fullRange": lsp_range(lines, diag.start, diag.end),
        "severity": diag.severity,
        "source": "Lean 4",
        "message": diag.message,
    }
    if diag.lean_tags:
        out["leanTags"] = list(diag.lean_tags)
    if diag.silent:
        out["isSilent"] = True
    return out
