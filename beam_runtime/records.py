"""Pydantic models of the on-disk marker and manifest: the schema of record (docs/RUNTIME.md).

`Marker` is `<root>/.lean-beam-install-root`, `Manifest` is `versions/<id>/manifest.json`. Only
the code that writes them (a fresh install) imports this module: install reuse, `runtime list`,
prune and doctor validate with `beam_runtime.record_check`, a stdlib validator of the JSON Schema
in `beam_runtime/records_schema.py`. That file is generated from these models by
`python -m beam_runtime.records`; tests regenerate it (any difference fails) and check that both
validators accept and refuse the same records.

Both models are strict (no coercion of `true` or `"3"` to an integer), so the JSON Schema says
everything they check.
"""

from __future__ import annotations

import pprint
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MARKER_OWNER = "lean-beam"
CreatedBy = Literal["pipx", "uv", "nix", "venv", "unknown"]
SCHEMA_MODULE = Path(__file__).resolve().parent / "records_schema.py"


class Marker(BaseModel):
    """Ownership marker of an install root; unknown keys are ignored."""

    model_config = ConfigDict(extra="ignore", strict=True)

    owner: Literal["lean-beam"]
    schema_: int = Field(alias="schema", ge=1)
    root: str

    def to_json(self) -> dict[str, object]:
        return {"owner": self.owner, "schema": self.schema_, "root": self.root}


class PythonInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    executable: str
    version: str
    abi: str
    implementation: str
    platform: str


class Manifest(BaseModel):
    """`versions/<id>/manifest.json`, schema 1."""

    model_config = ConfigDict(extra="forbid", strict=True)

    # An integer bounded to 1 rather than Literal[1], which would also accept `true` and `1.0`.
    schema_: int = Field(alias="schema", ge=1, le=1)
    runtime_id: str
    version: str
    payload_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    files: int = Field(ge=0)
    bytes: int = Field(ge=0)
    python: PythonInfo
    entry_points: dict[str, str]
    created_at: str = Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
    created_by: CreatedBy
    # sha256 over the hash lines of every `__pycache__/` file, as staged ("": no bytecode at
    # all). The payload hash leaves bytecode out; this holds it to what was staged.
    bytecode_sha256: str = Field(default="", pattern=r"^([0-9a-f]{64})?$")

    def to_json(self) -> dict[str, object]:
        return self.model_dump(by_alias=True)


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """Inline `$ref`s and drop `title`/`description` (the validator needs neither)."""
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _inline(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "description"):
            continue
        if key == "properties":
            out[key] = {name: _inline(sub, defs) for name, sub in value.items()}
        else:
            out[key] = _inline(value, defs)
    return out


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema(by_alias=True)
    return dict(_inline(raw, raw.pop("$defs", {})))


def render_schema_module() -> str:
    body = [
        '"""JSON Schema of the on-disk records, generated from `beam_runtime.records`.',
        "",
        "Do not edit: run `python -m beam_runtime.records` after changing a model.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "TYPE_CHECKING = False",
        "if TYPE_CHECKING:",
        "    from typing import Any",
        "",
    ]
    for name, model in (("MARKER", Marker), ("MANIFEST", Manifest)):
        text = pprint.pformat(json_schema(model), indent=1, width=96, sort_dicts=False)
        body.append(f"{name}: dict[str, Any] = {text}")
    return "\n".join(body) + "\n"


def main() -> int:
    SCHEMA_MODULE.write_text(render_schema_module(), encoding="utf-8")
    sys.stdout.write(f"wrote {SCHEMA_MODULE}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
