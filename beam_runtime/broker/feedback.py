"""``beam_feedback_report``: a local report card, never uploaded (decision 38).

The report is rendered as Markdown plus metadata and returned to the caller. With ``bundle`` it
is also written under the user state directory (``beam/feedback/<stamp>-<slug>``), optionally
zipped. ``confidential`` collects nothing derived from the project and does not echo the
workspace. Redaction (on by default) replaces the home directory with ``~`` and removes
token-like strings.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import time
from pathlib import Path
from typing import Any

from beam_runtime.broker.manager import SessionManager
from beam_runtime.broker.reporting import Context
from beam_runtime.version import VERSION

SCHEMA = "beam.feedback.report-card.v1"
_TOKENS = re.compile(
    r"(gh[pousr]_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{16,}|xox[abp]-[A-Za-z0-9-]{10,}"
    r"|\b(?=[A-Za-z_-]*\d)(?=[0-9_-]*[A-Za-z])[A-Za-z0-9_-]{40,}\b)"
)
_ENV_ASSIGN = re.compile(r"\b([A-Z][A-Z0-9_]{2,})=(\S+)")


def redact(text: str) -> str:
    home = os.path.expanduser("~")
    if home and home != "/":
        text = text.replace(home, "~")
    text = _ENV_ASSIGN.sub(lambda m: f"{m.group(1)}=[redacted]", text)
    return _TOKENS.sub("[redacted]", text)


def _slug(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:40] or "report"


def _collected(root: str, manager: SessionManager) -> dict[str, Any]:
    toolchain_file = Path(root, "lean-toolchain")
    info: dict[str, Any] = {
        "root": root,
        "lean_toolchain": toolchain_file.read_text("utf-8", "replace").strip()
        if toolchain_file.is_file()
        else None,
        "lakefiles": [n for n in ("lakefile.lean", "lakefile.toml") if Path(root, n).is_file()],
    }
    session = manager.cached(root)
    if session is not None:
        info["session"] = manager.describe().get(root)
        info["open_documents"] = sorted(d.source.display for d in session.documents.values())
        info["stderr_tail"] = session.stderr_tail()[-20:]
    return info


def _markdown(args: Any, collected: dict[str, Any] | None) -> str:
    lines = [f"# {args.title}", "", f"- kind: {args.kind}", f"- severity: {args.severity}"]
    if args.tags:
        lines.append(f"- tags: {', '.join(args.tags)}")
    lines.append(
        f"- lean-beam: {VERSION} (Python {platform.python_version()}, {platform.system()})"
    )
    sections = [
        ("Summary", args.summary),
        ("Reproduction", args.reproduction),
        ("Expected", args.expected),
        ("Actual", args.actual),
        ("Impact", args.impact),
        ("Workaround", args.workaround),
    ]
    for heading, body in sections:
        if body:
            lines += ["", f"## {heading}", "", body]
    if args.evidence:
        lines += ["", "## Evidence"]
        for item in args.evidence:
            content = item.content if isinstance(item.content, str) else json.dumps(item.content)
            lines += ["", f"### {item.name}", "", "```", content, "```"]
    if collected is not None:
        lines += ["", "## Collected context", "", "```json", json.dumps(collected, indent=2), "```"]
    return "\n".join(lines) + "\n"


def feedback_report(args: Any, root: str, manager: SessionManager, ctx: Context) -> dict[str, Any]:
    confidential = bool(args.confidential)
    if confidential:
        ctx.progress("preparing confidential beam_feedback_report")
        collected = None
    else:
        ctx.progress("collecting beam_feedback_report context")
        collected = _collected(root, manager)
    markdown = _markdown(args, collected)
    if args.redact:
        markdown = redact(markdown)
        if collected is not None:
            collected = json.loads(redact(json.dumps(collected)))
    metadata = {
        "schema": SCHEMA,
        "title": args.title,
        "kind": args.kind,
        "severity": args.severity,
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tags": list(args.tags),
        "bundle": args.bundle,
        "redacted": bool(args.redact),
        "confidential": confidential,
        "client_request_id": getattr(ctx, "request_id", None),
    }
    result: dict[str, Any] = {"markdown": markdown, "metadata": metadata}
    if args.include_collected and collected is not None:
        result["collected"] = collected
    if args.bundle != "none":
        result.update(_write_bundle(args, markdown, metadata))
    if not confidential:
        result["workspace"] = {"root": root}
    return result


def _write_bundle(args: Any, markdown: str, metadata: dict[str, Any]) -> dict[str, str]:
    import platformdirs

    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    base = Path(platformdirs.user_state_dir("beam")) / "feedback"
    folder = base / f"{stamp}-{os.getpid()}-{_slug(args.title)}"
    folder.mkdir(parents=True, exist_ok=False)
    (folder / "report.md").write_text(markdown, "utf-8")
    (folder / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n", "utf-8")
    for index, item in enumerate(args.evidence):
        content = item.content if isinstance(item.content, str) else json.dumps(item.content)
        if args.redact:
            content = redact(content)
        name = f"{index:02d}-{_slug(item.name)}.txt"
        (folder / "evidence").mkdir(exist_ok=True)
        (folder / "evidence" / name).write_text(content, "utf-8")
    if args.bundle == "zip":
        archive = shutil.make_archive(str(folder), "zip", root_dir=folder)
        shutil.rmtree(folder)
        return {"zip_path": archive}
    return {"bundle_dir": str(folder)}
