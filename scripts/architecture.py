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

lean-beam is three Python packages whose imports go one way. Each module owns one named concern,
stated in its docstring; this page is generated from those docstrings by
`scripts/architecture.py` (a test fails when it is stale). It opens with the package map and
the walk of one tool call through it; the module tables follow.

## Package map

```
 beam_install                           beam_mcp
 (writes the install root and           (speaks MCP: stdio server, router, tool catalog,
  client configs; `lean-beam`)           admission, handlers, the broker adapter)
        |                                      |
        +------------------+-------------------+    neither imports the other
                           v
                      beam_runtime
 (reads the install root; identity, toolchain, `search/`, the LSP client `lsp/`, `broker/`,
  and `host/`, the shared Lean host that serves one broker to many agents)

 beam_runtime/broker, top to bottom: a layer imports only the layers below it, and the
 modules one `|` separates never import each other
   standalone | entries                    one operation without MCP | the service table
   service                                 the `Broker` facade that beam_mcp calls
   operations | feedback                   the document tools | `beam_feedback_report`
   speculation | verify                    scratch probes, handles, `lean_try` | `lean_verify`
   queries                                 hover, navigation, goals, todo items
   session                                 one `lake serve` per workspace, its documents
   errors | fixes | results | arguments    what every layer shares
```

- `beam_runtime` imports neither `beam_install` nor `beam_mcp`; `beam_runtime.broker` and
  `beam_runtime.lsp` import nothing of MCP (neither `beam_mcp` nor the `mcp` SDK).
- `beam_install` and `beam_mcp` import `beam_runtime` and never each other.
- Inside the broker, `verify` imports neither `speculation` nor `queries`: the scratch documents
  it asks Lean through are handed in by `service`. Below the broker's layers sit
  `beam_runtime.lsp` (driven by `session`) and `beam_runtime.search` (`lean_search`, and the
  toolchain and manifest reads `verify` uses).
- No product module imports test code. Product modules are loaded by name only by the console
  scripts (`beam_runtime/entry.py`, `MAINS`) and a runtime's launcher (`beam_runtime/launcher.py`);
  `--backend` loads a file or module the user names (the tests' fault-injection backend).
- `scripts/check` (run by `scripts/test`) enforces these rules with `lint-imports`; the contracts
  are `[tool.importlinter]` in `pyproject.toml`, and they count imports under `TYPE_CHECKING`
  too. `tests/test_import_cycles.py` finds import circles, function-level imports included.

## One call, end to end: `lean_goals`

An MCP client writes one `tools/call` line for `lean_goals` on the server's stdin. It is the first
call, so no Lean is running yet. In order, through these modules:

1. `beam_mcp/main.py`: `lean-beam-mcp` (or `python -m beam_mcp`) turns flags and `LEAN_BEAM_MCP_*`
   into `Settings` (`settings.py`) and runs `server.Server`.
2. `beam_mcp/server.py`, phase 1 (no anyio, asyncio or pydantic loaded): the `LineReader` thread
   reads stdin, `LineSplitter` cuts it into lines and the `Inbox` hands them to the main thread,
   which passes each to `stdio.handle_line`: `wire.decode`, then `router.Router.handle`.
3. `beam_mcp/router.py`: `families.py` tells the protocol family (modern requests carry the protocol
   in `_meta`, legacy ones follow `initialize`); `_call` finds the tool's row in `tools/catalog.py`;
   `validate_arguments` asks `tools/admit.py`, which checks the arguments against `schema.json`
   (`beam_runtime/schema_check.py`) and builds an `Arguments` object from `fields.json` (arguments
   the schema rejects go to the pydantic model in `tools/models.py`, which words the error);
   `workspace.check_root_text` checks the root as text. The router returns a `PendingCall`.
4. `beam_mcp/aserver.py`, phase 2: a `PendingCall` ends phase 1; `Server.run` imports `aserver`
   (under `stdio.long_lived`) and `run_async` starts anyio. `AsyncServer.pump` takes stdin over from
   the thread when the loop can wait on it, `admit` makes a `Flight`, and a `Workers` task runs
   `run_call`, then `execute`: the root is canonicalized off the loop
   (`workspace.canonical_root_async` through `beam_runtime/safe_read.py`; a root canonicalized
   before is taken as remembered and checked again inside the call's first trip off the loop,
   `workspace.check_root` riding along as a `safe_read.Prelude`), a `backend.ToolContext`
   wraps the call's `progress.Reporter`, and the backend is made on first use
   (`backend.create_backend`).
5. `beam_mcp/hosted.py`: `SharedBackend` fills the default `wait_ms` and, by default, sends the
   call to the workspace's shared Lean host (docs/HOST.md): `beam_runtime/host/client.py`
   `HostLink` connects, starting the host first under its lock (`host/start.py`), and sends
   `host/call`; in the host, `host/server.py` rebuilds the arguments (`broker/entries.py`
   `Fields`) and runs steps 6 to 12 there, relaying progress back as notifications. With
   `--host off`, or when no host can be reached, `beam_mcp/lean.py` `BrokerBackend` runs them in
   this process: it builds the `Broker` from the settings, hands it the server's task group and
   runs the row's handler (`beam_mcp/tools/handlers.py`), which calls the same entry.
6. `beam_runtime/broker/entries.py`: `lean_goals` imports `queries.queries.goals` and calls
   `Broker.run(root, path, goals, args, ctx, rereads=True)`.
7. `beam_runtime/broker/service.py`: with no live session, `Broker.run` resolves and reads the file
   first (`session/paths.py`: `resolve_source_async`, `read_snapshot` into the
   `session/fingerprint.py` cache), so a bad path fails before Lean starts; then
   `session/manager.py` `SessionManager.use(root)` makes the workspace's session:
   `session/launch.py` resolves the command, `session/session.py` `LeanSession.start` opens
   `lsp/client.py` `LspClient.open_in` (the process from `lsp/process.py`) and sends `initialize`.
8. `beam_runtime/broker/queries/queries.py`: `goals` enters `CheckedDocument`, around
   `session/named.py` `NamedDocument`: a `session/reporting.py` `CallReport` for what the client
   is told, the document lock, `LeanSession.sync_text` (checks the remembered resolution of the
   path and re-reads the file in one trip, and opens or changes it in Lean through
   `lsp/messages.py`), `session/documents.py` `check_version`, and the report listening for the
   file's progress and diagnostics. `queries/positions.py` turns the position form into a line and
   character (`queries/goals.py` `after_position` for `mode: after`).
9. `beam_runtime/broker/queries/rpc.py`: `goals_at` connects an RPC session for the document
   (`$/lean/rpc/connect`) and asks `Lean.Widget.getInteractiveGoals` (`$/lean/rpc/call`). When Lean
   offers no RPC, or the RPC call fails for another reason than a closed or changed file, it asks
   `$/lean/plainGoal` instead.
10. `beam_runtime/broker/session/session.py`: `LeanSession.request` (Lean's failures and timeouts
    become `BrokerError`s of `broker/errors.py`), then `lsp/client.py` `LspClient.request`,
    `lsp/framing.py` `encode_message`, and `lsp/process.py` writes the frame to the stdin of
    `lake serve`.

The way back:

11. `lsp/client.py` reads the server's stdout (in a loop callback on asyncio, through
    `framing.FrameBuffer`); `_dispatch` wakes the waiting request. Notifications go to
    `LeanSession._on_notification`, the `OpenDocument` (`session/documents.py`) and the
    `CallReport`, which calls `ToolContext.progress`: while the call runs, the `progress.Reporter`
    queues a `notifications/progress` on the outbox (when the call has a progress token).
12. `queries/interactive.py` turns the RPC answer into structured goals (a `plainGoal` answer goes
    through `queries/goals.py` `parse_plain_goal`), and `queries/rpc.py` releases the answer's
    references. `goals` returns the result, whose shape of record is `results.GoalsResult`; the
    document lock and the session are released.
13. `beam_mcp/lean.py`: a `BrokerError` becomes a `beam_mcp/errors.py` `ToolError`, whose `data.fix`
    comes from `broker/fixes.py` when no layer below set one.
14. `beam_mcp/aserver.py` `execute`: when the call sent notifications, the answer waits until they
    are written and read (`AsyncOutbox.drained`, `delivered`); then `router.Router.finish_call`
    records `stats.py`, and `wire.tool_result_message` encodes the result, cutting a body over
    `--result-bytes` with `budget.py`.
15. The outbox (`Server.send`, then `aserver.AsyncOutbox.send`) writes the line to stdout at once
    (`stdio.write_all`) when the writer task is idle and the write cannot block, else queues it for
    the `writer` task.

A later call skips the start-up: its line is read on the event loop itself (when stdin is a pipe,
socket or terminal), the session is live, and `Broker.run` leaves reading the file to the query.
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
