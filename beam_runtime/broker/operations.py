"""The document tools: update, sync, refresh, close, save, close-save (docs/BROKER.md)."""

from __future__ import annotations

from typing import Any

import anyio

from beam_runtime.broker import errors
from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.session import diagnostics as diag
from beam_runtime.broker.session.documents import OpenDocument, workspace
from beam_runtime.broker.session.named import NamedDocument
from beam_runtime.broker.session.paths import SourceFile, read_source_async, resolve_source_async
from beam_runtime.broker.session.recovery import incomplete_data
from beam_runtime.broker.session.reporting import CallReport, Context, Preparing
from beam_runtime.broker.session.session import LeanSession
from beam_runtime.broker.session.waiting import barrier_within
from beam_runtime.broker.verify.save import (
    artifacts,
    build_failure,
    has_lake_workspace,
    module_name,
    source_hash,
    unknown_target,
)


async def update(session: LeanSession, path: str, ctx: Context) -> dict[str, Any]:
    async with NamedDocument(session, path, Preparing(ctx)) as (_, doc, changed):
        return {**workspace(session), "version": doc.version, "changed": changed}


async def close(session: LeanSession, path: str) -> dict[str, Any]:
    source = await resolve_source_async(session.root, path)
    async with session.document_lock(source):
        await session.close_document(source)
    return {**workspace(session), "closed": True}


async def sync(
    session: LeanSession,
    path: str,
    ctx: Context,
    *,
    scope: str,
    items: bool,
    refresh: bool = False,
    wait_ms: int | None = None,
) -> dict[str, Any]:
    preparing = Preparing(ctx, scope)
    if refresh:  # closed first, then opened again: no remembered resolution
        source = await resolve_source_async(session.root, path)
        preparing(source)
        async with session.document_lock(source):
            await session.close_document(source)
            doc, _ = await session.sync_text(source)
            complete = await _barrier(session, source, doc, preparing, wait_ms)
            body = sync_body(doc, include_items=items, scope=scope, complete=complete)
    else:
        async with NamedDocument(session, path, preparing) as (source, doc, _):
            complete = await _barrier(session, source, doc, preparing, wait_ms)
            body = sync_body(doc, include_items=items, scope=scope, complete=complete)
    return {
        **workspace(session),
        **body,
        "document_progress": doc.progress.to_json(),
        **_retry(complete, wait_ms),
    }


def _retry(complete: bool, wait_ms: int | None) -> dict[str, Any]:
    if complete:
        return {}
    return {"retry_after_ms": errors.retry_after_ms(wait_ms or 0)}


async def _barrier(
    session: LeanSession,
    source: SourceFile,
    doc: OpenDocument,
    preparing: Preparing,
    wait_ms: int | None = None,
) -> bool:
    """Wait for the barrier of the synced ``doc`` up to ``wait_ms``; the caller holds the lock.

    Whether the barrier finished; when it did not, it keeps running and the next call for this
    version joins it (``waiting.py``).
    """
    report = preparing.report
    assert report is not None  # told of `source` before its lock was taken
    report.attach(doc)
    try:
        complete = await barrier_within(session, doc, wait_ms)
    finally:
        report.detach(doc)
    if not complete:
        return False
    stale = [diag.message_of(item) for item in doc.diagnostics if diag.is_stale_marker(item)]
    if stale:
        data = incomplete_data(source, doc.text.text, stale)
        raise BrokerError(
            "syncBarrierIncomplete",
            f"{source.display} (version {doc.version}) depends on modules that are stale or "
            f"were not built; save or rebuild them (lake build), then lean_refresh this file",
            data,
        )
    return True


def sync_body(
    doc: OpenDocument, *, include_items: bool, scope: str, complete: bool = True
) -> dict[str, Any]:
    """Counts and readiness; a partial answer (``complete: false``) is never save-ready."""
    current = doc.diagnostics
    fatal = doc.progress.fatal
    summary: dict[str, Any] = {"counts": diag.counts(current), "complete": complete}
    if include_items:
        shaped = [diag.to_item(item, doc.source.display, doc.uri) for item in current]
        summary["items"] = [item for item in shaped if diag.in_scope(item, scope)]
    readiness = diag.readiness(current, fatal)
    if not complete:
        readiness = {**readiness, "save_ready": False, "reason": "stillElaborating"}
    return {
        "path": doc.source.display,
        "version": doc.version,
        "diagnostics": summary,
        "readiness": readiness,
    }


async def save(
    session: LeanSession,
    path: str,
    ctx: Context,
    *,
    scope: str,
    close_after: bool = False,
    wait_ms: int | None = None,
) -> dict[str, Any]:
    source = await resolve_source_async(session.root, path)
    preparing = Preparing(ctx, scope)
    preparing(source)
    report = preparing.report
    assert report is not None
    async with session.save_lock, session.document_lock(source):
        doc, _ = await session.sync_text(source)
        complete = await _barrier(session, source, doc, preparing, wait_ms)
        sync_result = sync_body(doc, include_items=False, scope=scope, complete=complete)
        if not complete:  # nothing saved: the same answer as a sync still running
            progress = doc.progress.to_json()
            return {
                **workspace(session),
                **sync_result,
                "document_progress": progress,
                **_retry(False, wait_ms),
            }
        if not sync_result["readiness"]["save_ready"]:
            raise BrokerError(
                "invalidParams",
                f"{source.display} has errors; fix them before saving",
                {"sync": sync_result},
            )
        lake = _save_setup(session, source, sync_result)
        module = module_name(session.root, source.abs_path)
        before = source_hash(doc.data)
        await _lake_build(session, lake, module, report)
        session.module_rebuilt(module)
        if source_hash(await read_source_async(source)) != before:
            raise BrokerError(
                "contentModified",
                f"{source.display} changed on disk while it was being saved",
                {"reason": "sourceChangedDuringSave", "uri": doc.uri},
            )
        saved = {
            "path": doc.source.display,
            "module": module,
            "version": doc.version,
            "source_hash": before,
            **artifacts(session.root, module),
            "sync": sync_result,
        }
        progress = doc.progress.to_json()
        if close_after:
            await session.close_document(source)
    if close_after:
        return {**workspace(session), "closed": True, "document_progress": progress, "saved": saved}
    return {**workspace(session), **saved, "document_progress": progress}


def _save_setup(session: LeanSession, source: SourceFile, sync_result: dict) -> str:
    lake = session.launch.lake
    if lake is None or not has_lake_workspace(session.root):
        raise BrokerError(
            "saveUnsupportedSetup",
            "saving needs a Lake workspace served by `lake serve` (this session runs "
            f"{session.launch.argv[0]} on a root without a lakefile, or not through Lake)",
            {"sync": sync_result, "reason": "noLakeWorkspace", "path": source.display},
        )
    return lake


async def _lake_build(session: LeanSession, lake: str, module: str, report: CallReport) -> None:
    from beam_runtime.broker.verify.lakebuild import read_lines, start_build, wind_down

    output: list[str] = []
    limit = session.limits.barrier_s
    process = await start_build(lake, [module], session.root, session.launch.environment())
    try:
        with anyio.fail_after(limit):
            await read_lines(process, lambda line: _build_line(line, output, report))
            code = await process.wait()
    except TimeoutError:
        raise errors.timeout("save", int(limit * 1000), f"lake build +{module}") from None
    finally:
        await wind_down(process)
    if code != 0:
        if unknown_target(output):
            raise BrokerError(
                "saveTargetNotModule",
                f"Lake does not know a module {module} in this workspace",
                build_failure(module, code, output),
            )
        raise BrokerError(
            "internalError",
            f"`lake build +{module}` failed with exit code {code}",
            build_failure(module, code, output),
        )


def _build_line(line: str, output: list[str], report: CallReport) -> None:
    output.append(line)
    report.setup_line(line)
