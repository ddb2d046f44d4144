"""The five speculative tools: ``lean_run_at``, ``lean_run_at_handle``, ``lean_run_with``,
``lean_run_with_linear`` and ``lean_release``.

A probe first brings the real document up to date under its lock (the usual re-read and version
check) and asks Lean whether there are goals at the position; that decides the probe kind. The
real document is then left alone: the probe runs in a scratch document borrowed from the pool
(see ``scratch.py``), outside the document lock, so probes on one file run side by side up to the
pool size. Nothing here writes to disk or changes the real document or its version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from beam_runtime.broker.config import PoolConfig
from beam_runtime.broker.queries.positions import echo, resolve
from beam_runtime.broker.queries.rpc import goals_at
from beam_runtime.broker.session.documents import check_version, workspace
from beam_runtime.broker.session.paths import SourceFile, resolve_source_async
from beam_runtime.broker.session.reporting import CallReport, Context
from beam_runtime.broker.session.session import LeanSession
from beam_runtime.broker.session.text import DocumentText
from beam_runtime.broker.speculation import probes
from beam_runtime.broker.speculation.handles import HandleRecord, HandleStore, new_id, stale
from beam_runtime.broker.speculation.scratch import ScratchRegistry
from beam_runtime.lsp import messages

if TYPE_CHECKING:
    from beam_runtime.broker.arguments import HandleArgs, LeanArgs, RunAtArgs, RunWithArgs


@dataclass(frozen=True)
class Snapshot:
    """The real document as the probe saw it."""

    source: SourceFile
    version: int
    prefix: str  # scratch text before the probe
    kind: str
    column: int
    line: int
    character: int


class Speculation:
    """Handles and scratch documents of the process; hooks itself into every session."""

    def __init__(self, config: PoolConfig, answer_bytes: int = 20_000) -> None:
        self.handles = HandleStore()
        self.scratch = ScratchRegistry(config)
        self.answer_bytes = answer_bytes  # the result budget lean_try fits its answer into

    def adopt(self, session: LeanSession) -> None:
        root, epoch = session.root, session.epoch
        session.handle_count = lambda: self.handles.count(root, epoch)

        def source_replaced(abs_path: str, version: int | None) -> None:
            self.handles.invalidate("sourceChanged", root, abs_path=abs_path, below_version=version)

        def stopped(stopping: LeanSession) -> None:
            self.handles.invalidate(stopping.stop_reason, root, epoch=epoch)
            self.scratch.forget_session(stopping)

        session.source_observers.append(source_replaced)
        session.stop_observers.append(stopped)

    # -- tools -----------------------------------------------------------------------------

    async def run_at(
        self, session: LeanSession, args: RunAtArgs, ctx: Context, *, keep: bool
    ) -> dict:
        source = await resolve_source_async(session.root, args.path)
        report = CallReport(ctx, source.display)
        report.preparing()
        snap = await self._snapshot(session, source, args, report)
        result, record = await self.probe(session, snap, "", args.text, report, owner=ctx.owner)
        if keep and record is not None:
            self.handles.add(record)
            result["next_handle"] = record.to_json()
        echoed = {"version": snap.version, "position": echo(snap.line, snap.character)}
        return {**workspace(session), **echoed, **result}

    async def run_with(
        self, session: LeanSession, args: RunWithArgs, ctx: Context, *, linear: bool
    ) -> dict:
        source = await resolve_source_async(session.root, args.path)
        report = CallReport(ctx, source.display)
        report.preparing()
        parent = await self._live(session, source, args.handle.id, ctx.owner)
        if linear:
            self.handles.retire(parent.id, "consumed")
        snap = Snapshot(
            source,
            parent.version,
            await self._prefix(session, source, parent),
            parent.kind,
            parent.column,
            parent.line,
            parent.character,
        )
        result, record = await self.probe(
            session, snap, parent.text, args.text, report, owner=ctx.owner
        )
        if record is not None:
            self.handles.add(record)
            result["next_handle"] = record.to_json()
        return {**workspace(session), **result}

    async def release(self, session: LeanSession, args: HandleArgs, ctx: Context) -> dict:
        source = await resolve_source_async(session.root, args.path)
        report = CallReport(ctx, source.display)
        report.preparing()
        record = await self._live(session, source, args.handle.id, ctx.owner)
        self.handles.retire(record.id, "released")
        return {**workspace(session), "result": None}

    # -- steps -----------------------------------------------------------------------------

    async def _snapshot(
        self, session: LeanSession, source: SourceFile, args: RunAtArgs, report: CallReport
    ) -> Snapshot:
        async with session.document_lock(source):
            doc, _ = await session.sync_text(source)
            check_version(doc, args.version)
            text = doc.text
            line, character = resolve(text, args)
            report.attach(doc)
            try:
                answer = await session.request(
                    "$/lean/plainGoal",
                    messages.position(doc.uri, line, character),
                    phase="probe",
                    timeout_s=_bounded(session.limits.barrier_s, args),
                )
            finally:
                report.detach(doc)
            version = doc.version
        kind = "tactic" if isinstance(answer, dict) else "command"
        prefix, column = _prefix_of(text, kind, line, character)
        return Snapshot(source, version, prefix, kind, column, line, character)

    async def release_owner(self, owner: str, reason: str) -> int:
        """A connection left a shared host, or dropped a workspace others still use: its
        handles are retired with ``reason`` and its scratch documents closed. How many handles."""
        count = 0
        for root in {record.root for record in self.handles.live.values()}:
            count += self.handles.invalidate(reason, root, owner=owner)
        await self.scratch.forget_owner(owner)
        return count

    async def _live(
        self, session: LeanSession, source: SourceFile, handle_id: str, owner: str
    ) -> HandleRecord:
        """The handle, checked against the workspace, the path, the owner, the session and the
        source."""
        record = self.handles.lookup(handle_id, session.root, source.abs_path, owner)
        if record.epoch != session.epoch:
            self.handles.retire(record.id, "sessionRestarted")
            raise stale("sessionRestarted", record.id, "the Lean session restarted since then")
        async with session.document_lock(source):
            doc, _ = await session.sync_text(source)  # an edit on disk retires the handle here
        if doc.version != record.version:
            self.handles.retire(record.id, "sourceChanged")
        return self.handles.lookup(handle_id, session.root, source.abs_path, owner)

    async def _prefix(self, session: LeanSession, source: SourceFile, record: HandleRecord) -> str:
        async with session.document_lock(source):
            doc = session.documents.get(source.abs_path)
            if doc is None or doc.version != record.version:
                self.handles.retire(record.id, "sourceChanged")
                raise stale("sourceChanged", record.id, "the source document changed")
            text = doc.text
        return _prefix_of(text, record.kind, record.line, record.character)[0]

    async def probe(
        self,
        session: LeanSession,
        snap: Snapshot,
        earlier: str,
        piece: str,
        report: CallReport | None,
        *,
        beyond_pool: bool = False,
        owner: str = "",
    ) -> tuple[dict[str, Any], HandleRecord | None]:
        """Runs ``piece`` on a borrowed scratch document of ``owner``; the result and, on
        success, a handle record of ``owner`` (not yet stored). ``report`` None: no file
        progress (``lean_try`` counts pairs)."""
        if snap.kind == "tactic":
            layout = probes.tactic_layout(snap.prefix, earlier, piece, snap.column)
        else:
            layout = probes.command_layout(snap.prefix, earlier, piece)
        borrowing = self.scratch.borrow(
            session, snap.source, layout.text, beyond_pool=beyond_pool, owner=owner
        )
        async with borrowing as scratch:
            if report is not None:
                report.attach(scratch.mirror)
            try:
                mirror = await scratch.load(layout.text)
                stale_modules = list(scratch.stale_modules)
                items = list(mirror.diagnostics)
                fatal = mirror.progress.fatal
                found = None
                if snap.kind == "tactic" and not mirror.progress.fatal:
                    end = {"line": layout.end[0], "character": layout.end[1]}
                    found = await goals_at(session, scratch.uri, end, session.limits.navigation_s)
            finally:
                if report is not None:
                    report.detach(scratch.mirror)
        result = probes.run_result(items, layout, fatal)
        if stale_modules:  # Lean would not load fresh imports even in a new worker
            result["stale_imports"] = True
            result["stale_modules"] = stale_modules
        result["proof_state"] = {"goals": found[1]} if found is not None else None
        result["next_handle"] = None
        record = None
        if result["success"]:
            record = HandleRecord(
                id=new_id(),
                root=session.root,
                epoch=session.epoch,
                abs_path=snap.source.abs_path,
                display=snap.source.display,
                version=snap.version,
                line=snap.line,
                character=snap.character,
                column=snap.column,
                kind=snap.kind,
                text=probes.accumulated(layout, len(snap.prefix)),
                owner=owner,
            )
        return result, record


def _bounded(limit_s: float, args: LeanArgs) -> float:
    """The session's limit, or the caller's ``wait_ms`` when that is shorter."""
    wait_ms = getattr(args, "wait_ms", None)
    return limit_s if wait_ms is None else min(limit_s, wait_ms / 1000)


def _prefix_of(text: DocumentText, kind: str, line: int, character: int) -> tuple[str, int]:
    if kind == "tactic":
        return probes.tactic_prefix(text, line, character)
    boundary = probes.command_boundary(text, line, character)
    return text.text[: text.index_of(boundary, 0)], 0
