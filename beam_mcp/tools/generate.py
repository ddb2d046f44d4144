"""Builds `beam_mcp/schema.json` (the `tools/list` payload) and `fields.json` from the models,
and the skill setup installs (`beam_install/skill_text.py`, from `beam_mcp.tools.skill`).

`fields.json` is what admitting a call without pydantic needs beyond the schema: every input
field in model order, with its default (none: required) and the fields of a nested model.
Run `python -m beam_mcp.tools.generate` after changing a model, the catalog or the skill; the
test suite regenerates the files in memory and fails when a committed copy differs.
"""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from beam_mcp.tools.catalog import TOOLS
from beam_mcp.tools.models import INPUT_MODELS

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema.json"
FIELDS_PATH = SCHEMA_PATH.with_name("fields.json")
# The skill setup installs: written into beam_install's package, which never imports beam_mcp.
SKILL_PATH = SCHEMA_PATH.parent.parent / "beam_install" / "skill_text.py"
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


def model_fields(model: type[BaseModel]) -> dict[str, Any]:
    """Each field of `model`: `default` unless required, `model` or `items` for nested models."""
    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        entry: dict[str, Any] = {}
        if not info.is_required():
            default = info.get_default(call_default_factory=True)
            assert default in (None, []) or isinstance(default, (str, int)), (name, default)
            entry["default"] = default
        entry.update(_nested(info.annotation))
        out[name] = entry
    return out


def _nested(annotation: Any) -> dict[str, Any]:
    """`{"model": fields}` for a model (or an optional one), `{"items": fields}` for a list."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {"model": model_fields(annotation)}
    if typing.get_origin(annotation) is list and _is_model(args[0]):
        return {"items": model_fields(args[0])}
    if len(args) == 1 and typing.get_origin(annotation) is not list:
        return _nested(args[0])  # `X | None`
    assert not any(_is_model(a) for a in args), f"unsupported nesting: {annotation}"
    return {}


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def render_fields() -> str:
    fields = {spec.name: model_fields(INPUT_MODELS[spec.name]) for spec in TOOLS}
    return json.dumps(fields, indent=1) + "\n"


def main() -> int:
    from beam_mcp.tools.skill import render_module

    SCHEMA_PATH.write_text(render(), encoding="utf-8")
    FIELDS_PATH.write_text(render_fields(), encoding="utf-8")
    SKILL_PATH.write_text(render_module(), encoding="utf-8")
    sys.stdout.write(f"wrote {SCHEMA_PATH}, {FIELDS_PATH} and {SKILL_PATH}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
