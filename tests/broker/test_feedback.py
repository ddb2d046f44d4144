"""``beam_feedback_report`` through the stdio server: local only, redaction, bundles."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from tests.broker.conftest import start
from tests.mcp.helpers import Server, call, structured


def _args(root: Path, **extra: object) -> dict:
    return {
        "workspace": {"root": str(root)},
        "title": "Hover is slow",
        "summary": "hover took long",
        "reproduction": "hover on Main.lean",
        "expected": "fast",
        "actual": "slow; token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        **extra,
    }


def test_report_redacts_and_echoes(servers: list[Server], project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    server = start(servers, HOME=str(home))
    args = _args(
        project, include_collected=True, evidence=[{"name": "log", "content": f"{home}/x"}]
    )
    body = structured(server.ask(call(1, "beam_feedback_report", args)))
    assert body["workspace"] == {"root": str(project)}
    assert "ghp_" not in body["markdown"] and "[redacted]" in body["markdown"]
    assert "~/x" in body["markdown"]
    assert body["metadata"]["schema"] == "beam.feedback.report-card.v1"
    assert body["collected"]["root"] == str(project)
    assert not list(home.rglob("report.md"))


def test_confidential_zip_bundle(servers: list[Server], project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    server = start(servers, HOME=str(home))
    args = _args(project, confidential=True, bundle="zip", include_collected=True)
    body = structured(server.ask(call(1, "beam_feedback_report", args)))
    assert "workspace" not in body and "collected" not in body
    assert str(project) not in json.dumps(body)
    archive = Path(body["zip_path"])
    assert archive.is_file() and str(archive).startswith(str(home))
    with zipfile.ZipFile(archive) as bundle:
        assert {"report.md", "metadata.json"} <= set(bundle.namelist())
