"""``beam_feedback_report``: a local report card, never uploaded (see docs/MCP.md).

The report is rendered as Markdown plus metadata and returned to the caller. With ``bundle`` it
is also written under the user state directory (``beam/feedback/<stamp>-<slug>``), optionally
zipped. ``confidential`` collects nothing derived from the project and does not echo the
workspace. Redaction (on by default, ``redact``) runs on every field the caller wrote and on
the collected context before anything is rendered, so the bundle's folder name is redacted too.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from beam_runtime import safe_read
from beam_runtime.broker.feedback.redact import redact_value
from beam_runtime.broker.session.manager import SessionManager
from beam_runtime.broker.session.reporting import Context
from beam_runtime.version import VERSION

if TYPE_CHECKING:
    from beam_runtime.broker.arguments import FeedbackArgs

SCHEMA = "beam.feedback.report-card.v1"
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
    info: dict[str, Any] = {
        "root": root,
        "lean_toolchain": await _toolchain(root),
        "lakefiles": [n for n in ("lakefile.lean", "lakefile.toml") if Path(root, n).is_file()],
    }
    session = manager.cached(root)
    if session is not None:
        info["session"] = manager.describe().get(root)
        info["open_documents"] = sorted(d.source.display for d in session.documents.values())
        info["stderr_tail"] = session.stderr_tail()[-20:]
    return info


async def _toolchain(root: str) -> str | None:
    """The project's ``lean-toolchain``, read off the loop and bounded; None when unusable."""
    try:
        data = await safe_read.read_async(os.path.join(root, "lean-toolchain"), safe_read.SMALL_CAP)
    except OSError:
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
        result.update(_write_bundle(args.bundle, fields, markdown, metadata))
    if not confidential:
        result["workspace"] = {"root": root}
    return result


def _write_bundle(
    bundle: str, fields: dict[str, Any], markdown: str, metadata: dict[str, Any]
) -> dict[str, str]:
    import platformdirs

    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    base = Path(platformdirs.user_state_dir("beam")) / "feedback"
    folder = base / f"{stamp}-{os.getpid()}-{_slug(fields['title'])}"
    folder.mkdir(parents=True, exist_ok=False)
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
