"""One Lean session: the ``lake serve`` of one workspace root and its open documents.

A session is created lazily by the manager, started once, and then either used until it is
stopped (drop, idle, eviction, shutdown) or found dead (the server exited), after which the
manager replaces it with a new one under a higher ``epoch``. Handles minted for speculative
execution remember the epoch, so a restart makes them stale.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from beam_runtime.broker import errors
from beam_runtime.broker.config import Limits
from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.fixes import FIX_BY_REASON
from beam_runtime.broker.session import edits
from beam_runtime.broker.session.documents import OpenDocument
from beam_runtime.broker.session.fingerprint import Snapshot, SourceCache, Span
from beam_runtime.broker.session.launch import LaunchSpec
from beam_runtime.broker.session.leanwork import LeanWork, header_of, header_span
from beam_runtime.broker.session.paths import SourceFile, path_to_uri, read_snapshot
from beam_runtime.broker.session.versions import VersionStore
from beam_runtime.lsp import messages
from beam_runtime.lsp.client import LspClient
from beam_runtime.lsp.errors import (
    CONTENT_MODIFIED,
    REQUEST_CANCELLED,
    WORKER_CRASHED,
    WORKER_EXITED,
    LspError,
    ProtocolViolation,
    RequestTimeout,
    ResponseError,
)

LAKE_CONFIG_MARKER = "package configuration has errors"
OUT_OF_MEMORY = "out of memory"  # Lean's runtime: "INTERNAL PANIC: out of memory"
# Starts the server under an address-space limit (RLIMIT_AS, inherited by every process of the
# tree), then becomes the server: same pid, nothing left in between.
_LIMIT = (
    "import os, resource, sys; n = int(sys.argv[1]); "
    "resource.setrlimit(resource.RLIMIT_AS, (n, n)); os.execvp(sys.argv[2], sys.argv[2:])"
)
RESOLVED_NAMES = 256
STOP_GRACE_S = 1.0

# ``LspClient.open_in`` with the server's task group bound: (argv=, cwd=, env=, on_notification=)
ChannelOpener = Callable[..., Awaitable[LspClient]]


class LeanSession:
    def __init__(
        self,
        root: str,
        epoch: int,
        launch: LaunchSpec,
        limits: Limits,
        versions: VersionStore,
        sources: SourceCache | None = None,
    ) -> None:
        self.root = root
        self.epoch = epoch
        self.launch = launch
        self.limits = limits
        self.versions = versions
        self.sources = sources if sources is not None else SourceCache()
        self.work = LeanWork()
        self.channel: LspClient | None = None
        self.documents: dict[str, OpenDocument] = {}
        self.by_uri: dict[str, OpenDocument] = {}
        self._locks: dict[str, anyio.Lock] = {}
        self.resolved: OrderedDict[str, SourceFile] = OrderedDict()  # see `remember_source`
        self.save_lock = anyio.Lock()
        self.in_flight = 0
        self.last_used = time.monotonic()
        self.closed = False
        # Scratch documents register their URIs here to receive notifications.
        self.uri_observers: dict[str, Callable[[str, dict[str, Any]], None]] = {}
        self.handle_count: Callable[[], int] = lambda: 0
        # Told (path, new version or None when closed) whenever a source document's text in
        # Lean is replaced, and (session) when the session stops; handles go stale on both.
        self.source_observers: list[Callable[[str, int | None], None]] = []
        self.stop_observers: list[Callable[[LeanSession], None]] = []
        self.stop_reason = "sessionRestarted"  # the manager says "workspaceDropped" on drop
        self.server_capabilities: dict[str, Any] = {}
        self.rpc: Any = None  # ``rpc.RpcSessions``, made on the first goals question
        self.saved_modules: dict[str, int] = {}  # module -> how many times lean_save built it
        # Bounded waits (waiting.py): running barriers by path, and the long-lived task group's
        # ``start_soon`` they run in (set by the broker).
        self.barriers: dict[str, Any] = {}
        self.spawn: Callable[..., Any] | None = None
        # Awaited before a new Lean worker starts (a document or a scratch document opens):
        # the memory budget (budget.py) may close idle workers or refuse. Set by the broker.
        self.admit_worker: Callable[[], Awaitable[None]] | None = None
        # --worker-memory-max: the address-space limit the server's tree runs under, if any.
        self.memory_cap: int | None = None

    def is_scratch_uri(self, uri: str) -> bool:
        """Scratch documents never appear in navigation results."""
        return uri in self.uri_observers

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return not self.closed and self.channel is not None and self.channel.alive

    async def start(self, opener: ChannelOpener) -> None:
        """Spawn the server, run the initialize handshake, refuse a broken Lake config."""
        try:
            self.channel = await opener(
                argv=capped(self.launch.argv, self.memory_cap),
                cwd=self.root,
                env=self.launch.environment(),
                on_notification=self._on_notification,
            )
        except FileNotFoundError as exc:
            raise errors.runtime_setup(
                "lakeNotFound",
                f"cannot start Lean: {self.launch.argv[0]} was not found",
                "install elan (it provides lake) or fix --lean-cmd / PATH",
                detail=f"{exc.strerror}: {exc.filename}",
            ) from exc
        except PermissionError as exc:
            raise errors.runtime_setup(
                "toolchainNotRunnable",
                f"cannot start Lean: {self.launch.argv[0]} is not executable",
                "repair the toolchain (`elan toolchain install`) or fix --lean-cmd",
                detail=f"{exc.strerror}: {exc.filename}",
            ) from exc
        await self._initialize()

    async def _initialize(self) -> None:
        channel = self._require_channel()
        params = {
            "processId": os.getpid(),
            "rootUri": path_to_uri(self.root),
            "workspaceFolders": [{"uri": path_to_uri(self.root), "name": "workspace"}],
            "capabilities": {"textDocument": {}, "workspace": {}, "window": {}},
            "initializationOptions": {},
        }
        try:  # ``initialized`` follows the answer at once (Lean insists on it)
            answer = await channel.initialize(params, self.limits.start_s)
        except RequestTimeout as exc:
            await self.stop()
            raise errors.timeout("sessionStart", _ms(exc), "starting Lean") from None
        except LspError as exc:
            tail = channel.stderr.snapshot()
            await self.stop()
            raise self._start_failure(tail, exc) from None
        capabilities = answer.get("capabilities") if isinstance(answer, dict) else None
        self.server_capabilities = capabilities if isinstance(capabilities, dict) else {}
        await anyio.sleep(self.limits.config_grace_s)
        tail = channel.stderr.snapshot()
        if any(LAKE_CONFIG_MARKER in line for line in tail):
            await self.stop()
            raise errors.runtime_setup(
                "lakeConfigInvalid",
                "Lake could not load this project's configuration",
                "fix the lakefile (run `lake build` in the project to see the error), then "
                "drop the workspace or retry",
                detail="Lake fell back to a plain Lean server",
                stderr_tail=tail,
            )

    def _start_failure(self, tail: list[str], exc: LspError) -> BrokerError:
        violation = _violation(exc)
        if any(LAKE_CONFIG_MARKER in line for line in tail):
            category, fix = "lakeConfigInvalid", "fix the lakefile, then retry"
        elif violation is not None:
            category, fix = "toolchainNotRunnable", FIX_BY_REASON["protocolViolation"]
        else:
            category = "toolchainNotRunnable"
            fix = "run `lake serve` in the project by hand to see why Lean does not start"
        return errors.runtime_setup(
            category,
            "the Lean server exited before it finished starting",
            fix,
            detail=str(exc),
            stderr_tail=tail,
            violation=violation,
        )

    async def stop(self) -> None:
        """``shutdown``/``exit``, then the whole process tree is killed (by the client)."""
        self.closed = True
        channel, self.channel = self.channel, None
        for doc in self.documents.values():
            doc.on_crash()
        for observer in list(self.stop_observers):
            observer(self)
        if channel is not None:
            with anyio.CancelScope(shield=True):
                await channel.close(grace=STOP_GRACE_S)

    def _require_channel(self) -> LspClient:
        if self.channel is None or self.closed:
            raise errors.worker_exited("the Lean session of this workspace was stopped")
        return self.channel

    def stderr_tail(self) -> list[str]:
        return self.channel.stderr.snapshot() if self.channel is not None else []

    # -- traffic ---------------------------------------------------------------------------

    def _on_notification(self, method: str, params: Any) -> None:
        if not isinstance(params, dict):
            return
        if method == "$/lean/fileProgress":
            uri = (params.get("textDocument") or {}).get("uri")
        elif method == "textDocument/publishDiagnostics":
            uri = params.get("uri")
        else:
            return
        doc = self.by_uri.get(uri) if isinstance(uri, str) else None
        if doc is not None:
            if method == "$/lean/fileProgress":
                doc.on_progress(params)
            else:
                doc.on_diagnostics(params)
        elif isinstance(uri, str) and uri in self.uri_observers:
            self.uri_observers[uri](method, params)

    async def notify(self, method: str, params: Any) -> None:
        await self._require_channel().notify(method, params)

    def _source_replaced(self, abs_path: str, version: int | None) -> None:
        for observer in list(self.source_observers):
            observer(abs_path, version)

    async def request(self, method: str, params: Any, *, phase: str, timeout_s: float) -> Any:
        """One LSP request with Lean's failures mapped onto tool errors."""
        channel = self._require_channel()
        try:
            return await channel.request(method, params, timeout_s)
        except RequestTimeout as exc:
            raise errors.timeout(phase, _ms(exc), f"{method} ({phase})") from None
        except ResponseError as exc:
            failure = self._map_response_error(method, params, exc)
            if failure.code == "workerExited" and self.memory_cap is not None:
                failure = await self._settle_crash(params, failure)
            raise failure from None
        except LspError as exc:  # the server exited, or its stream broke
            raise errors.worker_exited(
                f"the Lean server exited during {method}: {exc}",
                channel.stderr.snapshot(),
                _violation(exc),
            ) from None

    def _map_response_error(self, method: str, params: Any, exc: ResponseError) -> BrokerError:
        if exc.code in (WORKER_EXITED, WORKER_CRASHED):
            doc = self._document_of(params)
            if doc is not None:
                doc.on_crash()
            found = self._out_of_memory(doc)
            if found is not None:
                return found
            return errors.worker_exited(f"Lean's file worker crashed: {exc.message}")
        if exc.code == CONTENT_MODIFIED:
            return BrokerError("contentModified", f"{method}: {exc.message}", {"reason": "lean"})
        if exc.code == REQUEST_CANCELLED:
            return BrokerError("requestCancelled", f"{method} was cancelled by Lean")
        return BrokerError(
            "internalError",
            f"Lean failed {method}: {exc.message}",
            {"lsp_code": exc.code},
        )

    async def _settle_crash(self, params: Any, failure: BrokerError) -> BrokerError:
        """A worker crashed under a memory limit: Lean's stderr, read on its own pipe, may say
        why a moment after the answer that reported the crash (bounded: half a second)."""
        doc = self._document_of(params)
        for _ in range(10):
            found = self._out_of_memory(doc)
            if found is not None:
                return found
            await anyio.sleep(0.05)
        return failure

    def _out_of_memory(self, doc: OpenDocument | None) -> BrokerError | None:
        """``workerOutOfMemory`` when a worker died under ``--worker-memory-max`` and Lean's
        stderr says it ran out of memory (Lean's runtime prints that before it exits)."""
        cap = self.memory_cap
        if cap is None or doc is None or self.channel is None:
            return None
        if not any(OUT_OF_MEMORY in line.lower() for line in self.channel.stderr.snapshot()):
            return None
        return BrokerError(
            "workerOutOfMemory",
            f"Lean's worker for {doc.source.display} ran out of memory under the limit of "
            f"{cap} bytes of address space (--worker-memory-max)",
            {"path": doc.source.display, "cap_bytes": cap},
        )

    def _document_of(self, params: Any) -> OpenDocument | None:
        if not isinstance(params, dict):
            return None
        uri = (params.get("textDocument") or {}).get("uri") or params.get("uri")
        return self.by_uri.get(uri) if isinstance(uri, str) else None

    # -- documents -------------------------------------------------------------------------

    def known_source(self, name: str) -> SourceFile | None:
        """What ``name`` (a tool's ``path``) resolved to last time; re-checked when read."""
        return self.resolved.get(name)

    def remember_source(self, name: str, source: SourceFile | None) -> None:
        """Keep (or, with None, forget) a resolution; the newest 256 names are kept."""
        self.resolved.pop(name, None)
        if source is not None:
            self.resolved[name] = source
            while len(self.resolved) > RESOLVED_NAMES:
                self.resolved.popitem(last=False)

    def document_lock(self, source: SourceFile) -> DocumentLock:
        lock = self._locks.get(source.abs_path)
        if lock is None:
            lock = self._locks[source.abs_path] = anyio.Lock()
        return DocumentLock(lock)

    async def sync_text(
        self, source: SourceFile, name: str | None = None
    ) -> tuple[OpenDocument, bool]:
        """Re-read the file and bring Lean up to date; the caller holds the document lock.

        The file is read only when its stat fingerprint moved (``fingerprint.py``); an edit
        goes to Lean as one range edit unless it replaces most of the file. With ``name`` the
        read first checks that the caller's name for the file still leads to ``source``
        (`paths.SourceMoved` otherwise).
        """
        channel = self._require_channel()
        snap = await read_snapshot(self.sources, source, name)
        doc = self.documents.get(source.abs_path)
        if doc is None:
            if self.admit_worker is not None:
                await self.admit_worker()
            version = self.versions.next_version(source.abs_path)
            doc = OpenDocument(source, version, snap.data)
            self.documents[source.abs_path] = doc
            self.by_uri[source.uri] = doc
            self._source_replaced(source.abs_path, version)
            self.work.opened(header_of(doc.text.text))
            await channel.notify(
                "textDocument/didOpen", messages.did_open(source.uri, version, doc.text.text)
            )
            return doc, True
        doc.last_used = time.monotonic()
        changed = _differs(doc.data, snap)
        if not changed and not doc.crashed:
            return doc, False
        await self._send_change(channel, doc, snap)
        if changed:
            await channel.notify("textDocument/didSave", messages.did_save(doc.uri))
        return doc, changed

    async def _send_change(self, channel: LspClient, doc: OpenDocument, snap: Snapshot) -> None:
        """The new text to Lean: a range edit from the text Lean holds, or the whole text.

        Work in proportion to the edit for LF files (`edits.byte_change`): the reader's span
        when it compared with the bytes Lean holds, the changed lines decoded, the header
        looked at only when the edit starts inside it.
        """
        old, new, crashed = doc.data, snap.data, doc.crashed
        span = snap.span if snap.base is old else None
        if crashed:  # a new worker starts for the text Lean holds: send all of it
            version = self.versions.next_version(doc.source.abs_path)
            doc.new_version(version, new)
            change, ranged = {"text": doc.text.text}, False
            self.work.worker_started(header_of(doc.text.text))
        elif not doc.has_cr and not _has_cr(new, span):
            span = span or edits.byte_span(old, new)
            change, ranged, anchor = edits.byte_change(old, new, span, doc.anchor)
            version = self.versions.next_version(doc.source.abs_path)
            doc.new_version(version, new, anchor=anchor, has_cr=False)
            if span[0] < header_span(old):
                _header_moved(self.work, old, new)
        else:
            old_text = doc.text.text
            doc.new_version(self.versions.next_version(doc.source.abs_path), new)
            new_text = doc.text.text
            change, ranged = edits.content_change(old_text, new_text)
            header = header_of(new_text)
            if header != header_of(old_text):
                self.work.worker_started(header)
        self._source_replaced(doc.source.abs_path, doc.version)
        self.work.changed(ranged=ranged)
        params = messages.did_change(doc.uri, doc.version, [change])
        await channel.notify("textDocument/didChange", params)

    def lean_work(self) -> dict[str, int]:
        """``beam_stats``' ``lean`` object, without ``rss_bytes`` (the manager measures it)."""
        counts = self.work.as_dict()
        counts["bytes_sent"] = self.channel.bytes_sent if self.channel is not None else 0
        return counts

    async def close_if_idle(self, source: SourceFile) -> bool:
        """Closes the document unless a call uses it (its lock is held or a barrier runs)."""
        lock = self._locks.get(source.abs_path)
        barrier = self.barriers.get(source.abs_path)  # waiting.Barrier; finished ones stay
        if barrier is not None and not barrier.done.is_set():
            return False
        if lock is not None and lock.locked():
            return False
        if lock is None:
            return await self.close_document(source)
        lock.acquire_nowait()
        try:
            return await self.close_document(source)
        finally:
            lock.release()

    async def close_document(self, source: SourceFile) -> bool:
        doc = self.documents.pop(source.abs_path, None)
        if doc is None:
            return False
        self.by_uri.pop(doc.uri, None)
        doc.on_crash()
        self._source_replaced(source.abs_path, None)
        await self.forget_rpc(doc.uri)
        if self.alive:
            closing = messages.did_close(doc.uri)
            await self._require_channel().notify("textDocument/didClose", closing)
        return True

    def module_rebuilt(self, module: str) -> None:
        """``lean_save`` built ``module``: workers that imported it have a stale copy."""
        self.saved_modules[module] = self.saved_modules.get(module, 0) + 1

    async def forget_rpc(self, uri: str) -> None:
        if self.rpc is not None:
            await self.rpc.forget(uri)

    async def barrier(self, doc: OpenDocument) -> None:
        """Wait until Lean has published everything for the document's current version.

        Only the answer to ``waitForDiagnostics`` ends the wait: Lean writes every diagnostic of
        the version before it, including a fatal header's error, which comes *after* the fatal
        ``fileProgress``. Older watchdogs drop a pending request when a header change makes the
        worker exit (code 2) and start a new one; so when the version's progress has ended and
        stayed unchanged for ``barrier_reissue_s`` without an answer, the request is cancelled
        and sent again. So is a fatal progress left unanswered that long, once: a live worker
        (a failed header after such a restart) answers the new request, a crashed one holds it
        until the next edit (Lean queues a crashed worker's requests), so a second unanswered
        fatal progress is a crash, even when no request saw Lean's crash error (the worker died
        before the barrier was sent). The whole wait stays within ``barrier_s``, checked here
        alone: an attempt whose request ran out of time comes back to be reported.
        """
        params = messages.wait_for_diagnostics(doc.uri, doc.version)
        deadline = time.monotonic() + self.limits.barrier_s
        fatal_before = False
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise errors.timeout(
                    "barrier", int(self.limits.barrier_s * 1000), "textDocument/waitForDiagnostics"
                )
            outcome = await self._barrier_attempt(doc, params, remaining)
            if outcome == "answered":
                break
            if outcome == "fatal" and fatal_before:
                doc.on_crash()
                break
            fatal_before = outcome == "fatal"
        if doc.crashed:
            found = self._out_of_memory(doc)
            if found is not None:
                raise found
            raise errors.worker_exited(f"Lean's file worker for {doc.source.display} crashed")

    async def _barrier_attempt(self, doc: OpenDocument, params: Any, remaining: float) -> str:
        """One ``waitForDiagnostics``: ``answered``, ``fatal`` or ``dropped`` (send it again), or
        ``expired`` when its request used up ``remaining``."""
        outcome = "answered"
        failure: BrokerError | None = None
        async with anyio.create_task_group() as group:

            async def on_stall() -> None:
                nonlocal outcome
                outcome = await self._stalled(doc)
                group.cancel_scope.cancel()

            group.start_soon(on_stall)
            try:
                await self.request(
                    "textDocument/waitForDiagnostics",
                    params,
                    phase="barrier",
                    timeout_s=remaining,
                )
            except BrokerError as exc:  # raised here it would leave as an ExceptionGroup
                failure = exc
            group.cancel_scope.cancel()
        if failure is not None:
            if failure.code == "timeout":  # the whole wait is over: `barrier` says so
                return "expired"
            raise failure
        return outcome

    async def _stalled(self, doc: OpenDocument) -> str:
        """Once the version's progress has ended and nothing changed for a while: how it ended."""
        quiet_for = self.limits.barrier_reissue_s
        tick = max(0.05, min(quiet_for / 4, 1.0))
        seen: tuple[int, int] | None = None
        since = time.monotonic()
        while True:
            await anyio.sleep(tick)
            progress = doc.progress
            ended = progress.fatal or (progress.updates > 0 and progress.done)
            marker = (progress.updates, len(doc.diagnostics))
            now = time.monotonic()
            if not ended or marker != seen:
                seen, since = (marker if ended else None), now
                continue
            if now - since >= quiet_for:
                return "fatal" if progress.fatal else "dropped"


def capped(argv: list[str], cap: int | None) -> list[str]:
    """``argv``, run under an address-space limit of ``cap`` bytes when one is set."""
    if cap is None:
        return list(argv)
    import sys

    return [sys.executable, "-I", "-S", "-c", _LIMIT, str(cap), *argv]


def _ms(exc: RequestTimeout) -> int:
    return int(exc.timeout * 1000)


class DocumentLock:
    """``async with`` one document's lock without a loop turn when it is free.

    anyio's ``acquire`` always yields to the loop once, even uncontended.
    """

    def __init__(self, lock: anyio.Lock) -> None:
        self._lock = lock

    async def __aenter__(self) -> None:
        try:
            self._lock.acquire_nowait()
        except anyio.WouldBlock:
            await self._lock.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self._lock.release()


def _violation(exc: LspError) -> str | None:
    """What the server wrote that is not LSP, when that is why it was stopped."""
    return exc.violation if isinstance(exc, ProtocolViolation) else None


def _differs(held: bytes, snap: Snapshot) -> bool:
    """Whether the read differs from the bytes Lean holds; the reader's span decides when it
    compared with them, identity when the read was reused, a memcmp otherwise."""
    if snap.span is not None and snap.base is held:
        return not (len(held) == len(snap.data) == snap.span[0])
    return held != snap.data


def _has_cr(new: bytes, span: Span | None) -> bool:
    """A carriage return in ``new``, whose old text had none: only the changed bytes can hold
    one when the span is known."""
    if span is None:
        return b"\r" in new
    return new.find(b"\r", span[0], len(new) - span[1]) >= 0  # memchr over the change


def _header_moved(work: LeanWork, old: bytes, new: bytes) -> None:
    """An edit inside the import header: a new worker loads it when it changed."""
    header = header_of(new[: header_span(new)].decode("utf-8"))
    if header != header_of(old[: header_span(old)].decode("utf-8")):
        work.worker_started(header)
