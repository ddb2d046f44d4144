"""`setup`, `remove` and `doctor --client` take the names people use for the clients."""

from __future__ import annotations

import json

import pytest

from tests.setup.conftest import Beam


@pytest.mark.parametrize(
    ("alias", "client"),
    [
        ("claude", "claude-code"),
        ("Claude-Code", "claude-code"),
        ("claude_code", "claude-code"),
        ("gemini-cli", "gemini"),
        ("code", "vscode"),
        ("vs-code", "vscode"),
        ("mistral-vibe", "vibe"),
        ("codex-cli", "codex"),
    ],
)
def test_setup_accepts_an_alias(beam: Beam, alias: str, client: str) -> None:
    body = beam.setup_json(alias, "--dry-run")
    assert [c["client"] for c in body["changes"]] == [client]


def test_setup_remove_and_doctor_with_aliases(beam: Beam) -> None:
    body = beam.setup_json("claude", "gemini-cli", "code", "--yes")
    assert sorted(c["client"] for c in body["changes"]) == ["claude-code", "gemini", "vscode"]
    doctor = beam.beam("doctor", "--json", "--client", "claude")
    report = json.loads(doctor.stdout)
    assert doctor.code == 0, report
    assert any(c["name"] == "claude-code:lean-beam" for c in report["checks"])
    removed = beam.beam("remove", "gemini-cli", "code", "--yes", "--json")
    assert removed.code == 0, removed.stderr
    assert {c["client"] for c in removed.json()["changes"]} == {"gemini", "vscode"}


def test_an_unknown_name_is_a_usage_error_naming_the_clients(beam: Beam) -> None:
    done = beam.beam("setup", "emacs")
    assert done.code == 2
    assert "claude-code" in done.stderr and "gemini" in done.stderr
