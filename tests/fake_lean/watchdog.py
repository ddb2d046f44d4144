"""The fake watchdog: startup order, message dispatch, requests, cancellation and shutdown."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from tests.fake_lean import capabilities, features, imports, rpc
from tests.fake_lean.config import Settings
from tests.fake_lean.document import Document, Snapshot, diag_json
from tests.fake_lean.model import INFORMATION, Diag
from tests.fake_lean.source import Pos, eof, normalize
from tests.fake_lean.wire import Writer, read_message

CONTENT_MODIFIED = -32801
REQUEST_CANCELLED = -32800
METHOD_NOT_FOUND = -32601
INVALID_REQUEST = -32600
WORKER_EXITED = -32901
WORKER_CRASHED = -32902


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Abandoned(Exception):
    """The request was already answered (cancelled, its file closed, its worker crashed)."""


class Fatal(Exception):
    """The watchdog gives up, as Lean's does: message on stderr, exit code 1."""


@dataclass
class Pending:
    id: Any
    method: str
    uri: str | None
    answered: bool = False
    # The document and its snapshot when the request was read: an edit or close that came
    # after the request is judged against these, whenever the request's thread gets to run.
    doc: Document | None = None
    snap: Snapshot | None = None


class Server:
    def __init__(self, settings: Settings, stdin: BinaryIO, stdout: BinaryIO) -> None:
        self.settings = settings
        self.stdin = stdin
        self.writer = Writer(stdout)
        self.root = Path.cwd()
        self.cond = threading.Condition(threading.RLock())
        self.docs: dict[str, Document] = {}
        self.pending: dict[str, Pending] = {}
        self.silent = False
        self.incremental = False
        self.shutting_down = False
        self.register_answer: dict[str, Any] | None = None
        self.cancel_requests: list[Any] = []
        self.rpc = rpc.RpcState()

    # startup

    def run(self) -> int:
        try:
            self._startup()
            return self._main_loop()
        except Fatal as error:
            self._eprint(f"Watchdog error: {error}")
            self._stop_workers()
            return 1

    def _startup(self) -> None:
        self._eprint("fake Lean watchdog: starting")
        for number in range(self.settings.stderr_flood_lines):
            self._eprint(f"fake Lean watchdog: stderr noise line {number}")
        first = self._read()
        if first is None:
            raise Fatal("Stream was closed")
        if first.get("method") != "initialize" or "id" not in first:
            raise Fatal(f"Expected method 'initialize', got method '{first.get('method')}'")
        self._validate(first)
        params = first["params"]
        lean = ((params.get("capabilities") or {}).get("lean")) or {}
        self.silent = bool(lean.get("silentDiagnosticSupport"))
        self.incremental = bool(lean.get("incrementalDiagnosticSupport"))
        self.rpc.configure(lean)
        if self.settings.init_delay_ms:
            time.sleep(self.settings.init_delay_ms / 1000.0)
        self.writer.result(first["id"], capabilities.initialize_result(self.settings))
        second = self._read()
        if second is None:
            raise Fatal("Stream was closed")
        if second.get("method") != "initialized" or "id" in second:
            raise Fatal(f"Expected method 'initialized', got method '{second.get('method')}'")
        self._validate(second)
        self.writer.send(capabilities.REGISTER_WATCHER)

    def _read(self) -> dict[str, Any] | None:
        try:
            return read_message(self.stdin)
        except (ValueError, UnicodeDecodeError) as error:
            raise Fatal(f"Cannot read LSP message: {error}") from error

    def _validate(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if "params" not in message and method not in ("shutdown", "exit"):
            raise Fatal("Got invalid JSON-RPC message")

    # main loop

    def _main_loop(self) -> int:
        while True:
            message = self._read()
            if message is None:
                break
            method = message.get("method")
            if method is None:
                self._client_response(message)
                continue
            if "params" not in message and method not in ("shutdown", "exit"):
                raise Fatal("Got invalid JSON-RPC message")
            if "id" in message:
                if method == "exit":
                    raise Fatal("Got invalid JSON-RPC message")
                self._request(message["id"], method, message.get("params"))
            elif method == "exit" and "params" not in message:
                break
            else:
                self._notification(method, message["params"])
        self._stop_workers()
        return 0

    def _client_response(self, message: dict[str, Any]) -> None:
        if message.get("id") == "register_lean_watcher":
            with self.cond:
                self.register_answer = message

    def _notification(self, method: str, params: Any) -> None:
        if self.shutting_down:
            return
        if method in ("textDocument/didOpen", "textDocument/didClose"):
            document = params.get("textDocument") if isinstance(params, dict) else None
            uri = document.get("uri") if isinstance(document, dict) else None
            self._log({"notification": method, "uri": uri})
        with self.cond:
            if method == "textDocument/didOpen":
                self._did_open(params)
            elif method == "textDocument/didChange":
                self._did_change(params)
            elif method == "textDocument/didClose":
                self._did_close(params["textDocument"]["uri"])
            elif method == "textDocument/didSave":
                self._did_save(params["textDocument"]["uri"])
            elif method == "$/cancelRequest":
                self._cancel(params.get("id"))
            elif method in ("$/lean/rpc/keepAlive", "$/lean/rpc/release"):
                self._log({"notification": method, **rpc.notification(self, method, params)})
            elif method.startswith("$/") or method == "workspace/didChangeWatchedFiles":
                pass
            else:
                self._eprint(f"Got unsupported notification: {method}")
            self.cond.notify_all()

    # documents

    def _did_open(self, params: dict[str, Any]) -> None:
        item = params["textDocument"]
        uri = item["uri"]
        old = self.docs.pop(uri, None)
        if old is not None:
            old.close()
        mode = params.get("dependencyBuildMode", "always")
        doc = Document(self, uri, item["version"], item["text"], mode)
        self.docs[uri] = doc
        self.notify_progress(doc, doc.snap, [doc._whole(doc.snap, 1)])
        doc.start()

    def _did_change(self, params: dict[str, Any]) -> None:
        doc = self.docs.get(params["textDocument"]["uri"])
        changes = params.get("contentChanges") or []
        if doc is None or not changes:
            return
        doc.change(params["textDocument"]["version"], changes)
        ranged = [change for change in changes if "range" in change]
        if ranged:
            self._check_edit(doc, len(ranged))

    def _check_edit(self, doc: Document, ranges: int) -> None:
        """After range edits, a source document's text must equal its file.

        A mismatch is logged loudly (stderr and the request log); with
        ``FAKE_LEAN_STRICT_EDITS=1`` the server also exits with code 70, failing the test.
        Scratch documents have no file and are not checked.
        """
        path = _uri_path(doc.uri)
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                on_disk = normalize(handle.read())
        except OSError:
            return
        match = on_disk == doc.text
        self._log({"didChange": doc.uri, "ranges": ranges, "matchesFile": match})
        if match:
            return
        self._eprint(f"FAKE LEAN: INCREMENTAL EDIT MISMATCH for {doc.uri}: text != file")
        if os.environ.get("FAKE_LEAN_STRICT_EDITS") == "1":
            os._exit(70)

    def _did_close(self, uri: str) -> None:
        doc = self.docs.pop(uri, None)
        if doc is None:
            return
        doc.close()
        self.fail_pending(uri, CONTENT_MODIFIED, f"The file worker for {uri} has been terminated.")
        self.writer.notify(
            "textDocument/publishDiagnostics",
            {"uri": uri, "version": doc.version, "diagnostics": []},
        )

    def _did_save(self, uri: str) -> None:
        module = imports.module_of(self.root, _uri_path(uri))
        if module is None:
            return
        for doc in self.docs.values():
            if doc.uri == uri or module not in imports.imported_modules(
                doc.snap.lines, doc.snap.header_end
            ):
                continue
            if not doc.sticky:
                end = eof(doc.snap.lines)
                doc.sticky.append(Diag(Pos(0, 0), end, INFORMATION, imports.SHOULD_REBUILD))
            self.publish(doc, doc.snap, full=True)

    # output helpers (called with the lock held)

    def notify_progress(self, doc: Document, snap: Snapshot, processing: list[Any]) -> None:
        if doc.closed or doc.gen != snap.gen:
            return
        self.writer.notify(
            "$/lean/fileProgress",
            {"textDocument": {"uri": doc.uri, "version": snap.version}, "processing": processing},
        )

    def publish(self, doc: Document, snap: Snapshot, full: bool = False) -> None:
        if doc.closed or doc.gen != snap.gen:
            return
        diags = [d for d in doc.all_diags(snap) if self.silent or not d.silent]
        if self.incremental and snap.publishes and not full:
            fresh = diags[snap.sent :]
            if not fresh:
                return
            self._send_publish(doc, snap, fresh, True)
        else:
            self._send_publish(doc, snap, diags, False if self.incremental else None)
        snap.sent = len(diags)
        snap.publishes += 1

    def send_diagnostics(self, doc: Document, snap: Snapshot, diags: list[Diag]) -> None:
        self._send_publish(doc, snap, diags, False if self.incremental else None)

    def _send_publish(
        self, doc: Document, snap: Snapshot, diags: list[Diag], incremental: bool | None
    ) -> None:
        params: dict[str, Any] = {
            "uri": doc.uri,
            "version": snap.version,
            "diagnostics": [diag_json(snap.lines, diag) for diag in diags],
        }
        if incremental is not None:
            params["isIncremental"] = incremental
        self.writer.notify("textDocument/publishDiagnostics", params)

    def worker_crashed(self, doc: Document, snap: Snapshot, code: int) -> None:
        with self.cond:
            if doc._stale(snap):
                return
            self._eprint(f"[{doc.uri}] fake worker crashing with exit code {code}")
            self._log({"crash": doc.uri, "code": code})
            doc.crash(code)
            snap.crashed = True
            if code == 1:
                error = (
                    WORKER_EXITED,
                    f"Server process for {doc.uri} crashed, see stderr for exception.",
                )
            else:
                error = (
                    WORKER_CRASHED,
                    f"Server process for {doc.uri} crashed, likely due to a stack overflow "
                    "or a bug.",
                )
            self.fail_pending(doc.uri, *error)
            self.writer.notify(
                "$/lean/fileProgress",
                {
                    "textDocument": {"uri": doc.uri, "version": snap.version},
                    "processing": [doc._whole(snap, 2)],
                },
            )
            self.cond.notify_all()

    # requests

    def _request(self, request_id: Any, method: str, params: Any) -> None:
        if self.shutting_down:
            self.writer.error(
                request_id, INVALID_REQUEST, "Request received after 'shutdown' request."
            )
            return
        if method == "shutdown" and params is None:
            self._shutdown(request_id)
            return
        uri = _request_uri(params)
        self._log({"request": method, "id": request_id, "uri": uri})
        pending = Pending(request_id, method, uri)
        with self.cond:
            pending.doc = self.docs.get(uri) if uri is not None else None
            pending.snap = pending.doc.snap if pending.doc is not None else None
            self.pending[_key(request_id)] = pending
        thread = threading.Thread(target=self._serve, args=(pending, params), daemon=True)
        thread.start()

    def _serve(self, pending: Pending, params: Any) -> None:
        try:
            result = features.handle(self, pending, params)
        except Abandoned:
            return
        except RpcError as error:
            self.answer_error(pending, error.code, error.message)
        except Exception as error:  # a bug in the fake must not kill the server
            self._eprint(f"fake Lean internal error in {pending.method}: {error!r}")
            self.answer_error(pending, -32603, f"fake internal error: {error!r}")
        else:
            self.answer(pending, result)

    def answer(self, pending: Pending, result: Any) -> None:
        with self.cond:
            if pending.answered:
                return
            pending.answered = True
            self.pending.pop(_key(pending.id), None)
            self.writer.result(pending.id, result)

    def answer_error(self, pending: Pending, code: int, message: str) -> None:
        with self.cond:
            if pending.answered:
                return
            pending.answered = True
            self.pending.pop(_key(pending.id), None)
            self.writer.error(pending.id, code, message)
            self.cond.notify_all()

    def drop_pending(self, uri: str) -> None:
        """Forget the requests of ``uri`` without answering them (an older watchdog's restart)."""
        for pending in list(self.pending.values()):
            if pending.uri == uri and pending.method != "$/fake/state":
                self.drop(pending)
        self.cond.notify_all()

    def drop(self, pending: Pending) -> None:
        """Forget one request without answering it (logged as ``{"dropped": method}``)."""
        with self.cond:
            pending.answered = True
            self.pending.pop(_key(pending.id), None)
            self._log({"dropped": pending.method, "id": pending.id})

    def fail_pending(self, uri: str, code: int, message: str) -> None:
        for pending in list(self.pending.values()):
            if pending.uri == uri and pending.method != "$/fake/state":
                self.answer_error(pending, code, message)

    def _cancel(self, request_id: Any) -> None:
        self.cancel_requests.append(request_id)
        self._log({"cancel": request_id})
        pending = self.pending.get(_key(request_id))
        if pending is not None:
            self.answer_error(pending, REQUEST_CANCELLED, "")

    def document(self, pending: Pending) -> Document:
        """The document the request was sent to (it may have been closed since)."""
        if pending.doc is None:
            uri = pending.uri or ""
            raise RpcError(CONTENT_MODIFIED, f"Cannot process request to closed file '{uri}'")
        return pending.doc

    def wait_for(self, pending: Pending, doc: Document, ready: Any) -> Snapshot:
        """Block until ``ready(snapshot)`` holds for the document's current snapshot.

        In the legacy edit mode a request still waiting when a newer version arrived fails with
        "File changed."; one whose snapshot was ready before that is answered from it.
        """
        with self.cond:
            arrival = pending.snap if doc is pending.doc else None
            start_gen = doc.gen if arrival is None else arrival.gen
            while True:
                if pending.answered:
                    raise Abandoned()
                if doc.closed:
                    raise RpcError(
                        CONTENT_MODIFIED, f"The file worker for {doc.uri} has been terminated."
                    )
                if doc.crashed is None:
                    snap = doc.snap
                    if snap.gen != start_gen and self.settings.edit_mode == "legacy":
                        if arrival is not None and _answerable(arrival, ready):
                            return arrival
                        raise RpcError(CONTENT_MODIFIED, "File changed.")
                    if snap.fatal or ready(snap):
                        return snap
                self.cond.wait(0.25)

    # shutdown

    def _shutdown(self, request_id: Any) -> None:
        with self.cond:
            for uri, doc in list(self.docs.items()):
                doc.close()
                self.fail_pending(
                    uri, CONTENT_MODIFIED, f"The file worker for {uri} has been terminated."
                )
                self.writer.notify(
                    "textDocument/publishDiagnostics",
                    {"uri": uri, "version": doc.version, "diagnostics": []},
                )
            self.docs.clear()
            self.shutting_down = True
            self.writer.result(request_id, None)
            self.cond.notify_all()

    def _stop_workers(self) -> None:
        with self.cond:
            for doc in self.docs.values():
                doc.close()
            self.cond.notify_all()

    def state(self) -> dict[str, Any]:
        """The ``$/fake/state`` test hook."""
        with self.cond:
            return {
                "pid": os.getpid(),
                "registerAnswer": self.register_answer,
                "documents": {
                    uri: {
                        "version": doc.version,
                        "workerPid": doc.worker_pid(),
                        "crashed": doc.crashed,
                        "elaborated": len(doc.snap.results),
                        "commands": len(doc.snap.commands),
                        "cached": len(doc.cache),
                        "freshElaborations": doc.fresh_elaborations,
                    }
                    for uri, doc in self.docs.items()
                },
                "pending": sorted(p.method for p in self.pending.values()),
                "cancelRequests": list(self.cancel_requests),
                "rpc": self.rpc.to_json(),
                "silent": self.silent,
                "incremental": self.incremental,
                "profile": self.settings.profile,
            }

    def _log(self, entry: dict[str, Any]) -> None:
        """One JSON line in ``FAKE_LEAN_REQUEST_LOG``, for tests that only see the MCP side."""
        if self.settings.request_log is None:
            return
        with self.settings.request_log.open("a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")

    def _eprint(self, text: str) -> None:
        try:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


def _answerable(snap: Snapshot, ready: Any) -> bool:
    return not snap.crashed and (snap.fatal or bool(ready(snap)))


def _key(request_id: Any) -> str:
    return json.dumps(request_id)


def _request_uri(params: Any) -> str | None:
    if not isinstance(params, dict):
        return None
    document = params.get("textDocument")
    if isinstance(document, dict) and isinstance(document.get("uri"), str):
        return str(document["uri"])
    uri = params.get("uri")
    return uri if isinstance(uri, str) else None


def _uri_path(uri: str) -> Path:
    from urllib.parse import unquote, urlparse

    return Path(unquote(urlparse(uri).path))
