"""Writing `manifest.json`, the last file of a staged runtime (docs/RUNTIME.md, "Manifest")."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

from beam_install.payload import Payload
from beam_runtime.entry import ENTRY_POINTS
from beam_runtime.layout import MANIFEST_NAME
from beam_runtime.records import Manifest


def build_manifest(payload: Payload) -> Manifest:
    return Manifest.model_validate(
        {
            "schema": 1,
            "runtime_id": payload.runtime_id,
            "version": payload.version,
            "payload_sha256": payload.sha256,
            "files": len(payload.files),
            "bytes": payload.total_bytes,
            "python": payload.python,
            "entry_points": dict(ENTRY_POINTS),
            "created_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "created_by": payload.created_by,
            "bytecode_sha256": payload.bytecode_sha256,
        }
    )


def write_manifest(stage: Path, payload: Payload) -> Manifest:
    """Write and fsync `<stage>/manifest.json` (read-only, like every runtime file)."""
    manifest = build_manifest(payload)
    path = stage / MANIFEST_NAME
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(manifest.to_json(), indent=2, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(path, 0o444)
    return manifest
