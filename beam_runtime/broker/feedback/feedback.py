"""``beam_feedback_report``: a local report card, never uploaded (see docs/MCP.md).

The report is rendered as Markdown plus metadata and returned to the caller. With ``bundle`` it
is also written under the user state directory (``beam/feedback/<stamp>-<slug>``), optionally
zipped. ``confidential`` collects nothing derived from the project and does not echo the
workspace. Redaction (on by default, ``redact``) runs on every field the caller wrote, on the
collected context and on the echoed workspace root before anything is rendered, so the bundle's
folder name is redacted too. Every file it touches (the project's, the bundle's) is touched off
the event loop and bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import re
import shutil
import threading
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from beam_runtime import safe_read
from beam_runtime.broker.feedback.redact import redact_value
from beam_runtime.broker.session.manager import SessionManager
from beam_runtime.broker.session.paths import off_loop
from beam_runtime.broker.session.reporting import Context
from beam_runtime.version import VERSION

if TYPE_CHECKING:
    from beam_runtime.broker.arguments import FeedbackArgs

SCHEMA = "beam.feedback.report-card.v1"
LAKEFILES = ("lakefile.lean", "lakefile.toml")
_SECTIONS = (
    ("Summary", "summary"),
    ("Reproduction", "reproduction"),
    ("Expected", "expected"),
    ("Actual", "actual"),
    ("Impact", "impact"),
    ("Workaround", "workaround"),
)


def _slug(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:40] or "report"


async def _collected(root: str, manager: SessionManager) -> dict[str, Any]:
    """What the report says about the project. Every file touch runs off the event loop and
    bounded: a file that does not answer (a hung mount) is listed under ``unreadable``."""
    unreadable: list[str] = []
    toolchain, *found = await asyncio.gather(
        _toolchain(root, unreadable), *(_is_file(root, name, unreadable) for name in LAKEFILES)
    )
    info: dict[str, Any] = {
        "root": root,
        "lean_toolchain": toolchain,
        "lakefiles": [name for name, there in zip(LAKEFILES, found, strict=True) if there],
    }
    if unreadable:
        info["unreadable"] = unreadable
    session = manager.cached(root)
    if session is not None:
        info["session"] = manager.describe().get(root)
        info["open_documents"] = sorted(d.source.display for d in session.documents.values())
        info["stderr_tail"] = session.stderr_tail()[-20:]
    return info


def _failed(name: str, exc: OSError, unreadable: list[str]) -> None:
    if not isinstance(exc, FileNotFoundError):
        unreadable.append(f"{name}: {exc.strerror or exc}")


async def _is_file(root: str, name: str, unreadable: list[str]) -> bool:
    path = os.path.join(root, name)
    try:
        return await safe_read.call_async(partial(os.path.isfile, path), path)
    except OSError as exc:
        _failed(name, exc, unreadable)
        return False


async def _toolchain(root: str, unreadable: list[str]) -> str | None:
    """The project's ``lean-toolchain``, read off the loop and bounded; None when unusable."""
    try:
        data = await safe_read.read_async(os.path.join(root, "lean-toolchain"), safe_read.SMALL_CAP)
    except OSError as exc:
        _failed("lean-toolchain", exc, unreadable)
        return None
    return data.decode("utf-8", "replace").strip()


def _fields(args: FeedbackArgs) -> dict[str, Any]:
    """Everything the caller wrote, as plain data (redacted as a whole before any rendering)."""
    return {
        "title": args.title,
        "kind": args.kind,
        "severity": args.severity,
        "tags": list(args.tags),
        "sections": [(heading, getattr(args, name)) for heading, name in _SECTIONS],
        "evidence": [(item.name, item.content) for item in args.evidence],
    }


def _evidence_text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content)


def _markdown(fields: dict[str, Any], collected: dict[str, Any] | None) -> str:
    lines = [
        f"# {fields['title']}",
        "",
        f"- kind: {fields['kind']}",
        f"- severity: {fields['severity']}",
    ]
    if fields["tags"]:
        lines.append(f"- tags: {', '.join(fields['tags'])}")
    lines.append(
        f"- lean-beam: {VERSION} (Python {platform.python_version()}, {platform.system()})"
    )
    for heading, body in fields["sections"]:
        if body:
            lines += ["", f"## {heading}", "", body]
    if fields["evidence"]:
        lines += ["", "## Evidence"]
        for name, content in fields["evidence"]:
            lines += ["", f"### {name}", "", "```", _evidence_text(content), "```"]
    if collected is not None:
        lines += ["", "## Collected context", "", "```json", json.dumps(collected, indent=2), "```"]
    return "\n".join(lines) + "\n"


async def feedback_report(
    args: FeedbackArgs, root: str, manager: SessionManager, ctx: Context
) -> dict[str, Any]:
    confidential = bool(args.confidential)
    if confidential:
        ctx.progress("preparing confidential beam_feedback_report")
        collected = None
    else:
        ctx.progress("collecting beam_feedback_report context")
        collected = await _collected(root, manager)
    fields = _fields(args)
    if args.redact:  # every field, before anything is serialized
        fields = redact_value(fields)
        collected = redact_value(collected)
    markdown = _markdown(fields, collected)
    metadata = {
        "schema": SCHEMA,
        "title": fields["title"],
        "kind": args.kind,
        "severity": args.severity,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tags": list(fields["tags"]),
        "bundle": args.bundle,
        "redacted": bool(args.redact),
        "confidential": confidential,
        "client_request_id": getattr(ctx, "request_id", None),
    }
    result: dict[str, Any] = {"markdown": markdown, "metadata": metadata}
    if args.include_collected and collected is not None:
        result["collected"] = collected
    if args.bundle != "none":
        write = partial(_write_bundle, args.bundle, fields, markdown, metadata)
        result.update(await off_loop(write, "the feedback bundle"))
    if not confidential:
        result["workspace"] = {"root": redact_value(root) if args.redact else root}
    return result


_CLAIM = threading.Lock()  # two reports of one process never pick the same folder


def _new_folder(base: Path, name: str) -> Path:
    """``base/name``, or ``name-2``, ``name-3``... when that folder or its zip exists already
    (two reports with the same title in the same second)."""
    base.mkdir(parents=True, exist_ok=True)
    with _CLAIM:
        for attempt in range(1, 1000):
            folder = base / (name if attempt == 1 else f"{name}-{attempt}")
            if folder.with_name(folder.name + ".zip").exists():
                continue
            try:
                folder.mkdir()
            except FileExistsError:
                continue
            return folder
    folder = base / f"{name}-{os.urandom(4).hex()}"
    folder.mkdir()
    return folder


def _write_bundle(
    bundle: str, fields: dict[str, Any], markdown: str, metadata: dict[str, Any]
) -> dict[str, str]:
    import platformdirs

    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    base = Path(platformdirs.user_state_dir("beam")) / "feedback"
    folder = _new_folder(base, f"{stamp}-{os.getpid()}-{_slug(fields['title'])}")
    (folder / "report.md").write_text(markdown, "utf-8")
    (folder / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n", "utf-8")
    for index, (name, content) in enumerate(fields["evidence"]):
        (folder / "evidence").mkdir(exist_ok=True)
        path = folder / "evidence" / f"{index:02d}-{_slug(name)}.txt"
        path.write_text(_evidence_text(content), "utf-8")
    if bundle == "zip":
        archive = shutil.make_archive(str(folder), "zip", root_dir=folder)
        shutil.rmtree(folder)
        return {"zip_path": archive}
    return {"bundle_dir": str(folder)}
