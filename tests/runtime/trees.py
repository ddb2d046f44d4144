"""Making many valid runtimes cheaply, the way the installer would have made them.

`clone_runtime` takes a runtime that a real `lean-beam install` created and derives another
runtime from it whose payload differs by one extra file, `site/lean_beam_test_variant.txt`
(standing in for "a different set of installed packages"). Everything else follows the
installer: the payload hash and id are recomputed by the installer's rules, the manifest keeps the
source's fields except `runtime_id`, `payload_sha256`, `files`, `bytes` and `created_at`, and is
written the way `beam_install.manifest_writer` writes it (sorted keys, indent 2, mode 0444); the
tree is built in `state/staging/` with the installer's own `new_stage`, gets its lease through
`create_lease` and is published with `publish` (rename into `versions/`). Files are hard links
to the source's files: same bytes and the same read-only modes the installer gives them, only
the link count differs (prune never changes file modes, so the source is not affected).
`payload_lines` is checked against a real manifest in tests/runtime/test_trees.py.
"""

from __future__ import annotations

import json
import os
import stat
from functools import lru_cache
from pathlib import Path

from beam_install import staging
from beam_runtime import layout
from beam_runtime.record_check import (
    file_mode_tag,
    file_sha256,
    hash_line,
    load_manifest,
    payload_sha256,
    runtime_id_for,
)
from beam_runtime.records import Manifest

VARIANT = "site/lean_beam_test_variant.txt"


@lru_cache(maxsize=8)
def payload_lines(runtime_dir: Path) -> tuple[bytes, ...]:
    """The hash lines of every payload file (no manifest, no __pycache__)."""
    lines = []
    for current, dirnames, filenames in os.walk(runtime_dir):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            full = os.path.join(current, name)
            rel = os.path.relpath(full, runtime_dir).replace(os.sep, "/")
            if rel in (layout.MANIFEST_NAME, VARIANT):
                continue
            mode = os.lstat(full).st_mode
            lines.append(hash_line(file_sha256(full), file_mode_tag(mode), rel))
    return tuple(lines)


def clone_runtime(root: Path, source_id: str, *, variant: str, created_at: str) -> str:
    """Publish a runtime derived from `versions/<source_id>`; returns its id."""
    source = layout.runtime_dir(root, source_id)
    assert not (source / VARIANT).exists(), "clone only runtimes a real install created"
    base = load_manifest(source)
    content = f"variant {variant}\n".encode()
    variant_line = hash_line(_sha256(content), "644", VARIANT)
    digest = payload_sha256([*payload_lines(source), variant_line])
    runtime_id = runtime_id_for(base.version, digest)
    body = base.to_json()
    body.update(
        runtime_id=runtime_id,
        payload_sha256=digest,
        files=base.files + 1,
        bytes=base.bytes + len(content),
        created_at=created_at,
    )
    manifest = Manifest.model_validate(body)
    stage = staging.new_stage(root, runtime_id)
    _link_tree(source, stage)
    (stage / VARIANT).write_bytes(content)
    os.chmod(stage / VARIANT, 0o444)
    (stage / layout.MANIFEST_NAME).write_text(
        json.dumps(manifest.to_json(), indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    os.chmod(stage / layout.MANIFEST_NAME, 0o444)
    staging.create_lease(root, runtime_id)
    staging.publish(stage, root, runtime_id)
    return runtime_id


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _link_tree(source: Path, target: Path) -> None:
    for current, dirnames, filenames in os.walk(source):
        rel = os.path.relpath(current, source)
        base = target if rel == "." else target / rel
        for name in dirnames:
            (base / name).mkdir(mode=stat.S_IMODE(os.lstat(os.path.join(current, name)).st_mode))
        for name in filenames:
            relpath = os.path.relpath(os.path.join(current, name), source).replace(os.sep, "/")
            if relpath in (layout.MANIFEST_NAME, VARIANT):
                continue
            os.link(os.path.join(current, name), base / name)
