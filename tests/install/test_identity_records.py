"""Marker and manifest records that look almost right give `runtime_error`.

Each case edits one field of a real install's records, then asks the runtime's own launcher for
its identity (`version --json`), as a client would.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.installed import Installed, make_writable

MARKER = ".lean-beam-install-root"


def edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    make_writable(path.parent) if path.name == "manifest.json" else path.chmod(0o644)
    body = json.loads(path.read_text())
    change(body)
    path.write_text(json.dumps(body))


def marker_owner(i: Installed) -> None:
    edit_json(i.root / MARKER, lambda body: body.update(owner="someone-else"))


def marker_newer(i: Installed) -> None:
    edit_json(i.root / MARKER, lambda body: body.update(schema=2))


def marker_schema_text(i: Installed) -> None:
    edit_json(i.root / MARKER, lambda body: body.update(schema="1"))


def marker_schema_true(i: Installed) -> None:
    edit_json(i.root / MARKER, lambda body: body.update(schema=True))  # equal to 1, not an int


def marker_schema_float(i: Installed) -> None:
    edit_json(i.root / MARKER, lambda body: body.update(schema=1.0))


def manifest_version_number(i: Installed) -> None:
    edit_json(i.runtime_dir / "manifest.json", lambda body: body.update(version=1))


def manifest_schema_newer(i: Installed) -> None:
    edit_json(i.runtime_dir / "manifest.json", lambda body: body.update(schema=2))


@pytest.mark.parametrize(
    ("corrupt", "phrases"),
    [
        (marker_owner, ["marker", "not owned by lean-beam", "rename the whole install root"]),
        (marker_newer, ["marker", "newer lean-beam", "schema 2"]),
        (marker_schema_text, ["marker", "schema '1'"]),
        (marker_schema_true, ["marker", "schema True"]),
        (marker_schema_float, ["marker", "schema 1.0"]),
        (manifest_version_number, ["manifest", "no version", "out of versions/"]),
        (manifest_schema_newer, ["manifest", "not a schema 1 manifest"]),
    ],
)
def test_almost_right_records_are_runtime_errors(
    installed_root: Installed, corrupt: Callable[[Installed], None], phrases: list[str]
) -> None:
    sound = installed_root.run([installed_root.launcher("beam-cli"), "version", "--json"])
    assert sound.code == 0 and sound.json()["runtime_error"] is None, sound.stderr
    corrupt(installed_root)
    done = installed_root.run([installed_root.launcher("beam-cli"), "version", "--json"])
    assert done.code == 0, done.stderr
    error = done.json()["runtime_error"]
    assert isinstance(error, str) and "\n" not in error
    for phrase in phrases:
        assert phrase in error
