"""The generated records schema, and agreement of the stdlib validator with the pydantic models.

`beam_runtime.record_check` validates markers and manifests on the hot paths without pydantic;
the models in `beam_runtime.records` stay the schema of record. These tests fail when the
committed `records_schema.py` is stale, or when the two validators disagree on any record of
the corpus (valid ones, realistic corruptions and every `runtime_error` case).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from beam_runtime import identity, record_check, records
from beam_runtime.layout import MANIFEST_NAME, MARKER_NAME
from beam_runtime.records_schema import MANIFEST, MARKER

RUNTIME_ID = "0.1.0-0123456789abcdef"


def good_manifest() -> dict[str, Any]:
    return {
        "schema": 1,
        "runtime_id": RUNTIME_ID,
        "version": "0.1.0",
        "payload_sha256": "0123456789abcdef" * 4,
        "files": 3,
        "bytes": 1234,
        "python": {
            "executable": "/usr/bin/python3.11",
            "version": "3.11.7",
            "abi": "cpython-311-x86_64-linux-gnu",
            "implementation": "cpython",
            "platform": "linux-x86_64",
        },
        "entry_points": {"lean-beam": "beam_runtime.entry:run_lean_beam"},
        "created_at": "2026-01-02T03:04:05Z",
        "created_by": "venv",
    }


def good_marker() -> dict[str, Any]:
    return {"owner": "lean-beam", "schema": 1, "root": "/home/u/.local/share/beam"}


def with_(base: dict[str, Any], path: str, value: Any) -> bytes:
    """`base` with the dotted key set to `value` (or removed for `...`), as JSON bytes."""
    body = json.loads(json.dumps(base))
    *parents, last = path.split(".")
    target = body
    for key in parents:
        target = target[key]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    return json.dumps(body).encode()


MANIFEST_EDITS: list[tuple[str, Any]] = [
    *[(key, ...) for key in good_manifest()],
    *[(f"python.{key}", ...) for key in good_manifest()["python"]],
    ("schema", True), ("schema", 1.0), ("schema", "1"), ("schema", 2), ("schema", 0),
    ("files", -1), ("files", 0), ("files", True), ("files", 2.0), ("files", "3"),
    ("bytes", None), ("bytes", 10**30),
    ("runtime_id", 7), ("version", None), ("version", ""),
    ("payload_sha256", "0123456789ABCDEF" * 4), ("payload_sha256", "0" * 63),
    ("payload_sha256", "0" * 64 + "\n"), ("payload_sha256", "0" * 65),
    ("created_at", "2026-01-02T03:04:05.123Z"), ("created_at", "2026-01-02T03:04:05"),
    ("created_at", "2026-01-02T03:04:05Z\n"), ("created_at", "x2026-01-02T03:04:05Z"),
    ("created_at", "2026-01-02 03:04:05Z"), ("created_at", "٢٠٢٦-01-02T03:04:05Z"),
    ("created_by", "pip"), ("created_by", "nix"), ("created_by", None),
    ("python", "python3"), ("python.extra", "x"), ("python.executable", 3),
    ("entry_points", {}), ("entry_points", []), ("entry_points", {"a": 1}),
    ("entry_points", {"a": "m:f", "b": "n:g"}),
    ("schema_", 1), ("extra", None),
]  # fmt: skip

MARKER_EDITS: list[tuple[str, Any]] = [
    ("owner", ...), ("schema", ...), ("root", ...),
    ("owner", "someone"), ("owner", None), ("schema", 0), ("schema", 2), ("schema", True),
    ("schema", 1.0), ("schema", "1"), ("root", 1), ("root", "/somewhere/else"),
    ("extra", {"anything": [1, 2]}), ("schema_", 1),
]  # fmt: skip

RAW_CORPUS: list[bytes] = [
    b"{not json", b"[1, 2", b"", b"null", b"[]", b'"text"', b"1",
    b"\xef\xbb\xbf" + json.dumps(good_marker()).encode(),
    json.dumps(good_marker()).encode()[:-1] + b', "z": "\xff"}',
    json.dumps(good_marker()).encode() + b" trailing",
    json.dumps(good_marker()).encode() + b"\n\n  ",
    json.dumps(good_marker()).encode()[:-1] + b', "z": NaN}',
    json.dumps(good_marker()).encode()[:-1] + b', "schema": 3}',
    json.dumps(good_manifest()).encode(),
    json.dumps(good_manifest(), indent=2, sort_keys=True).encode() + b"\n",
]  # fmt: skip


def stdlib_ok(raw: bytes, schema: dict[str, Any]) -> bool:
    try:
        record_check.parse_record(raw, schema)
    except ValueError:
        return False
    return True


def pydantic_ok(raw: bytes, model: type[records.BaseModel]) -> bool:
    try:
        model.model_validate_json(raw)
    except ValueError:  # pydantic's ValidationError is a ValueError
        return False
    return True


def corpus() -> list[tuple[str, bytes]]:
    cases = [("manifest", with_(good_manifest(), k, v)) for k, v in MANIFEST_EDITS]
    cases += [("marker", with_(good_marker(), k, v)) for k, v in MARKER_EDITS]
    cases += [(kind, raw) for raw in RAW_CORPUS for kind in ("manifest", "marker")]
    return cases


def test_committed_schema_is_generated_from_the_models() -> None:
    committed = records.SCHEMA_MODULE.read_text(encoding="utf-8")
    assert committed == records.render_schema_module(), "run: python -m beam_runtime.records"
    assert records.json_schema(records.Manifest) == MANIFEST
    assert records.json_schema(records.Marker) == MARKER


@pytest.mark.parametrize(("kind", "raw"), corpus())
def test_stdlib_validator_agrees_with_pydantic(kind: str, raw: bytes) -> None:
    schema, model = {
        "manifest": (MANIFEST, records.Manifest),
        "marker": (MARKER, records.Marker),
    }[kind]
    assert stdlib_ok(raw, schema) == pydantic_ok(raw, model), raw


def test_corpus_has_both_outcomes() -> None:
    outcomes = {(kind, pydantic_ok(raw, records.Manifest if kind == "manifest" else records.Marker))
                for kind, raw in corpus()}  # fmt: skip
    assert outcomes == {("manifest", True), ("manifest", False), ("marker", True),
                        ("marker", False)}  # fmt: skip


def test_unsupported_keyword_is_an_error_not_a_pass() -> None:
    with pytest.raises(NotImplementedError):
        record_check.schema_problem({"type": "integer", "multipleOf": 3}, 4)


# Directory level: a runtime as `structural_problem` sees it, and the same checks done with the
# pydantic models; every `runtime_error` case of the identity tests is here.


def make_runtime(base: Path) -> Path:
    root = base / "root"
    runtime = root / "versions" / RUNTIME_ID
    runtime.mkdir(parents=True)
    marker = {**good_marker(), "root": str(root)}
    (root / MARKER_NAME).write_text(json.dumps(marker))
    (runtime / MANIFEST_NAME).write_text(json.dumps(good_manifest()))
    return runtime


def pydantic_structural_ok(runtime: Path) -> bool:
    root = runtime.parent.parent
    try:
        marker = records.Marker.model_validate_json((root / MARKER_NAME).read_bytes())
        manifest = records.Manifest.model_validate_json((runtime / MANIFEST_NAME).read_bytes())
    except (OSError, ValueError):
        return False
    same_root = os.path.realpath(marker.root) == os.path.realpath(root)
    return marker.schema_ == 1 and same_root and manifest.runtime_id == runtime.name


def rewrite(name: str, text: str | None) -> Callable[[Path], None]:
    def apply(runtime: Path) -> None:
        path = runtime / name if name == MANIFEST_NAME else runtime.parent.parent / name
        if text is None:
            path.unlink()
        else:
            path.write_text(text)

    return apply


def edit_manifest(key: str, value: Any) -> Callable[[Path], None]:
    def apply(runtime: Path) -> None:
        (runtime / MANIFEST_NAME).write_bytes(with_(good_manifest(), key, value))

    return apply


DIRECTORY_CASES: dict[str, Callable[[Path], None]] = {
    "sound": lambda runtime: None,
    "marker missing": rewrite(MARKER_NAME, None),
    "marker invalid": rewrite(MARKER_NAME, "{not json"),
    "marker names another root": rewrite(MARKER_NAME, json.dumps(good_marker())),
    "marker of a newer schema": rewrite(MARKER_NAME, json.dumps({**good_marker(), "schema": 2})),
    "manifest missing": rewrite(MANIFEST_NAME, None),
    "manifest invalid": rewrite(MANIFEST_NAME, "[1, 2"),
    "manifest names another id": edit_manifest("runtime_id", "0.0.1-0123456789abcdef"),
    "manifest with a bad created_at": edit_manifest("created_at", "yesterday"),
    "manifest with an unknown key": edit_manifest("extra", 1),
    "manifest with a string size": edit_manifest("bytes", "1234"),
}


@pytest.mark.parametrize("case", list(DIRECTORY_CASES))
def test_structural_check_agrees_with_pydantic(tmp_path: Path, case: str) -> None:
    runtime = make_runtime(tmp_path)
    DIRECTORY_CASES[case](runtime)
    problem = record_check.structural_problem(runtime)
    assert (problem is None) == pydantic_structural_ok(runtime), problem
    assert (problem is None) == (case == "sound"), problem


EXTRA_JSON = [b' {"a": [1, 2.5e3, null, true, "\\u00e9"]} ', b"NaN", b"[1, 2", b"{} {}"]


@pytest.mark.parametrize("raw", [*RAW_CORPUS, *EXTRA_JSON])
def test_start_up_json_parser_matches_json(raw: bytes) -> None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return
    try:
        expected: Any = json.loads(text)
    except ValueError:
        expected = ValueError
    try:
        got: Any = identity.parse_json(text)
    except ValueError:
        got = ValueError
    assert repr(got) == repr(expected)
