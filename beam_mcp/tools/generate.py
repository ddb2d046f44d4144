"""Builds `beam_mcp/schema.json` (the `tools/list` payload) from the catalog and the models.

Run `python -m beam_mcp.tools.generate` after changing a model or the catalog; the test suite
regenerates the file in memory and fails when the committed copy differs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from beam_mcp.tools.catalog import TOOLS
from beam_mcp.tools.models import INPUT_MODELS

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema.json"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def input_schema(tool: str) -> dict[str, Any]:
    raw = INPUT_MODELS[tool].model_json_schema()
    defs = raw.pop("$defs", {})
    schema = _clean(raw, defs)
    schema.setdefault("properties", {})
    return {"$schema": DIALECT, **schema}


def _clean(node: Any, defs: dict[str, Any]) -> Any:
    """Inlines `$ref`s, drops `title`s and collapses `X | None = None` to plain `X`."""
    if isinstance(node, list):
        return [_clean(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _clean(merged, defs)
    node = _drop_optional_null(node)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key == "properties":
            out[key] = {name: _clean(sub, defs) for name, sub in value.items()}
        else:
            out[key] = _clean(value, defs)
    return out


def _drop_optional_null(node: dict[str, Any]) -> dict[str, Any]:
    variants = node.get("anyOf")
    if not (isinstance(variants, list) and node.get("default", 0) is None):
        return node
    kept = [v for v in variants if v != {"type": "null"}]
    if len(kept) != 1:
        return node
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
    return {**kept[0], **rest}


def build() -> dict[str, Any]:
    tools = []
    for spec in TOOLS:
        entry: dict[str, Any] = {
            "name": spec.name,
            "description": spec.description,
            "inputSchema": input_schema(spec.name),
        }
        if spec.annotations is not None:
            entry["annotations"] = dict(spec.annotations)
        tools.append(entry)
    return {"tools": tools}


def render() -> str:
    return json.dumps(build(), indent=1, sort_keys=False) + "\n"


def main() -> int:
    SCHEMA_PATH.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {SCHEMA_PATH}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
