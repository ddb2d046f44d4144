#!/usr/bin/env python3
"""Writes docs/ARCHITECTURE.md from the packages' and modules' own docstrings.

`python3 scripts/architecture.py` rewrites the file; `--check` exits 1 when it is stale (the
test suite runs that). The layer rules come from the import-linter contracts in pyproject.toml.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = REPO / "docs" / "ARCHITECTURE.md"
PACKAGES = ("beam_install", "beam_mcp", "beam_runtime")

INTRO = """\
# Architecture

lean-beam is three Python packages with one-way imports (decision 43). Each module owns one
named concern, stated in its docstring; this page is generated from those docstrings by
`scripts/architecture.py` (a test fails when it is stale).

## Layers

```
 beam_install              beam_mcp
 (writes the root and      (speaks MCP: server, router,
  client configs; the       tool catalog and handlers,
  lean-beam command)        the broker adapter)
        |                        |
        +-----------+------------+      neither imports the other
                    v
              beam_runtime
 (reads the root, identity, toolchain, resolver, LSP client, broker)
```

- `beam_runtime` imports neither `beam_install` nor `beam_mcp`; `beam_runtime.broker` and
  `beam_runtime.lsp` import nothing of MCP (neither `beam_mcp` nor the `mcp` SDK).
- `beam_install` and `beam_mcp` import `beam_runtime` and never each other.
- No product module imports test code. Product modules are loaded by name only by the console
  scripts (`beam_runtime/entry.py`, `MAINS`) and a runtime's launcher (`beam_runtime/launcher.py`);
  `--backend` loads a file or module the user names (the tests' fault-injection backend).
- `scripts/check` (run by `scripts/test`) enforces the first three with `lint-imports`; the
  contracts are `[tool.importlinter]` in `pyproject.toml`.
"""

OUTRO = """\
## Data files
- `beam_mcp/schema.json`: the `tools/list` payload, generated from the catalog and the input
  models (`python -m beam_mcp.tools.generate`); a test fails when it is stale. The same command
  writes `beam_mcp/fields.json` (each input field's default and nested model), which
  `tools/admit.py` builds admitted inputs from without pydantic.
- `beam_runtime/records_schema.py`: JSON Schema of the marker and manifest, generated from
  `beam_runtime/records.py`; `record_check.py` validates with it on paths that must start fast
  (through `schema_check.py`, which also checks tool inputs against `schema.json`).

## Tests
- `tests/fake_lean/`: the fake Lean language server and fake `lake`, `elan`, `lean` executables
  (see its README); `tests/mcp/sleep_backend.py`: the fault-injection backend loaded through
  `--backend`; `tests/support/`: shared helpers (temporary venv with the built wheel, installed
  roots, MCP client environment).
- One directory per area: `install`, `runtime`, `mcp`, `lsp`, `broker`, `speculative`.

## Conventions
- Commands return typed results with `to_json()` and `to_text()`; `beam_runtime.cli.output`
  renders them. Failures are `BeamError`s: nothing on stdout, `{"error": {...}}` on stderr with
  `--json`, exit 1. Usage errors exit 2 (click's default).
- Tools are dispatched from the catalog (`beam_mcp/tools/catalog.py`): one row per tool with its
  input model, handler and how it runs; see docs/CONTRIBUTING.md for adding one.
- Heavy modules (pydantic, lsprotocol, click, anyio) are imported lazily on paths that need a
  fast start (`entry.py`, the launcher, `tools/list`, `runtime list`).
"""


def summary(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = doc.strip().split("\n\n")[0]
    return " ".join(first.split()).replace("|", "\\|") or "(no docstring)"


def section(package: Path) -> list[str]:
    name = package.relative_to(REPO).as_posix()
    lines = [
        f"## {name}",
        summary(package / "__init__.py"),
        "",
        "| module | owns |",
        "| --- | --- |",
    ]
    for module in sorted(package.glob("*.py")):
        if module.name != "__init__.py":
            lines.append(f"| `{module.name}` | {summary(module)} |")
    return [*lines, ""]


def render() -> str:
    parts = [INTRO]
    for top in PACKAGES:
        packages = sorted(p.parent for p in (REPO / top).rglob("__init__.py"))
        for package in packages:
            parts.append("\n".join(section(package)))
    parts.append(OUTRO)
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if TARGET.read_text(encoding="utf-8") != text:
            sys.stderr.write("docs/ARCHITECTURE.md is stale: run python3 scripts/architecture.py\n")
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
