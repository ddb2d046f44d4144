"""`tests/runtime/trees.py` agrees with the installer: its hash lines rebuild a real manifest."""

from __future__ import annotations

import os

from beam_runtime.record_check import full_problem, load_manifest, payload_sha256, runtime_id_for
from tests.runtime.conftest import Installed
from tests.runtime.trees import VARIANT, clone_runtime, payload_lines


def test_payload_lines_rebuild_the_installed_manifest(installed: Installed) -> None:
    runtime = installed.versions() / installed.runtime_id
    manifest = load_manifest(runtime)
    lines = payload_lines(runtime)
    assert payload_sha256(list(lines)) == manifest.payload_sha256
    assert len(lines) == manifest.files
    assert runtime_id_for(manifest.version, manifest.payload_sha256) == installed.runtime_id


def test_a_clone_is_a_valid_runtime_of_its_own(installed: Installed) -> None:
    clone = clone_runtime(
        installed.root, installed.runtime_id, variant="x", created_at="2020-01-01T00:00:00Z"
    )
    runtime = installed.versions() / clone
    manifest = load_manifest(runtime)
    assert full_problem(runtime) is None  # hashes every file, as doctor does
    assert manifest.runtime_id == clone != installed.runtime_id
    assert payload_sha256(list(payload_lines(runtime.parent / installed.runtime_id))) != (
        manifest.payload_sha256
    )
    assert os.stat(runtime / VARIANT).st_mode & 0o777 == 0o444
    assert (installed.root / "state" / "leases" / f"{clone}.lease").is_file()
