"""`lean-beam lean sync|goals|hover|run-at|todo|verify FILE`: the Lean tools from a shell.

Each command runs one broker operation in-process (no MCP server): it starts Lean for the
project, prints what an agent would read (`--json`: the tool's result as compact JSON), stops
Lean and exits 1 when Lean reports errors (or the probe fails), 1 with `error:`/`fix:` on stderr
for a tool error. Lean is started with `--lean-cmd`, else through `--beam-cli` (default: the
`beam-cli` next to this command, else on PATH).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any, NoReturn

import click


def _position(command: Any) -> Any:
    options = [
        click.option("--line", type=int, help="0-based line (with --character)."),
        click.option("--character", type=int, help="0-based UTF-16 column."),
        click.option("--line1", type=int, help="1-based line (with --match)."),
        click.option("--match", "match_text", help="Text on --line1; its first character."),
        click.option("--occurrence", type=int, help="Which match on the line (1-based)."),
        click.option("--declaration", help="Declaration name (with --sorry)."),
        click.option("--sorry", type=int, help="K-th sorry in the declaration (1-based)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _common(command: Any) -> Any:
    options = [
        click.argument("file"),
        click.option(
            "--root",
            help="Project root (default: nearest directory with a "
            "lean-toolchain or lakefile above FILE).",
        ),
        click.option("--json", "as_json", is_flag=True, help="The tool's result as JSON."),
        click.option(
            "--wait-ms",
            type=click.IntRange(min=0),
            default=600_000,
            show_default=True,
            help="How long to wait for Lean.",
        ),
        click.option("--lean-cmd", help="Command that starts a Lean server in the root."),
        click.option("--beam-cli", help="beam-cli that configures the project (mcp-config)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.group("lean")
def lean() -> None:
    """Run the Lean tools on one file without an MCP client (debugging, shell-only agents)."""


@lean.command("sync")
@_common
def sync(**options: Any) -> None:
    """Check FILE; exit 1 when it has errors or Lean did not finish."""
    result = _run("lean_sync", options, {})
    _print(result, options["as_json"], _sync_text)
    complete = result["diagnostics"].get("complete", True)
    errors = result["diagnostics"]["counts"].get("error", 0)
    raise SystemExit(0 if complete and errors == 0 else 1)


@lean.command("goals")
@_common
@_position
@click.option("--mode", type=click.Choice(["before", "after"]), default="before", show_default=True)
def goals(**options: Any) -> None:
    """Tactic goals at a position of FILE."""
    result = _run("lean_goals", options, {"mode": options["mode"]})
    _print(result, options["as_json"], None)


@lean.command("hover")
@_common
@_position
def hover(**options: Any) -> None:
    """Hover information at a position of FILE."""
    _print(_run("lean_hover", options, {}), options["as_json"], None)


@lean.command("run-at")
@_common
@_position
@click.option("--text", required=True, help="Command or tactic text to try at the position.")
def run_at(**options: Any) -> None:
    """Try text at a position of FILE (never written to disk); exit 1 when it fails."""
    result = _run("lean_run_at", options, {"text": options["text"]})
    _print(result, options["as_json"], None)
    raise SystemExit(0 if result.get("success") else 1)


@lean.command("todo")
@_common
def todo(**options: Any) -> None:
    """Open work in FILE: sorry, holes, diagnostics, code actions, incomplete proofs."""
    _print(_run("lean_todo", options, {}), options["as_json"], _todo_text)


@lean.command("verify")
@_common
def verify(**options: Any) -> None:
    """Build FILE and what imports it with Lake, check axioms; exit 1 unless ok."""
    result = _run("lean_verify", options, {})
    _print(result, options["as_json"], None)
    raise SystemExit(0 if result.get("ok") else 1)


# ---------------------------------------------------------------------- running


def _run(tool: str, options: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    import anyio

    from beam_runtime.broker.errors import BrokerError
    from beam_runtime.broker.standalone import Call, config, run_once

    file = os.path.abspath(options["file"])
    root = _root(options["root"], file, options["as_json"])
    position: dict[str, Any] = {
        k: options.get(k)
        for k in ("line", "character", "line1", "occurrence", "declaration", "sorry")
    }
    position["match"] = options.get("match_text")
    call = Call(path=file, wait_ms=options["wait_ms"], **position, **extra)
    lean_cmd = tuple(shlex.split(options["lean_cmd"])) if options["lean_cmd"] else None
    broker_config = config(lean_cmd, None if lean_cmd else _beam_cli(options["beam_cli"]))
    try:
        result: dict[str, Any] = anyio.run(run_once, broker_config, root, tool, call)
    except Exception as exc:
        error = _leaf(exc)
        if isinstance(error, BrokerError):
            _fail(error.code, error.message, error.data, options["as_json"])
        if error is exc:
            raise
        # An OSError or MemoryError out of the broker's task group (EMFILE while Lean starts):
        # the command line reports it as a categorized error, as any other command's.
        raise error from None
    return result


def _leaf(exc: BaseException) -> BaseException:
    """The failure an exception group stands for: a BrokerError first, then running out of
    memory, then a system error, else its first leaf; `exc` itself when it is no group."""
    leaves: list[BaseException] = []
    pending = [exc]
    while pending:
        current = pending.pop(0)
        inner = getattr(current, "exceptions", None)
        if isinstance(inner, tuple):
            pending.extend(inner)
        else:
            leaves.append(current)
    from beam_runtime.broker.errors import BrokerError

    for kind in (BrokerError, MemoryError, OSError):
        for leaf in leaves:
            if isinstance(leaf, kind):
                return leaf
    return leaves[0] if leaves and leaves[0] is not exc else exc


def _root(given: str | None, file: str, as_json: bool) -> str:
    from beam_runtime.toolchain import find_project_root

    if given is not None:
        return os.path.realpath(given)
    found = find_project_root(Path(file).parent)
    if found is None:
        _fail(
            "invalidInput",
            f"no Lean project (lean-toolchain or lakefile) above {file}",
            {"fix": "pass --root with the project's directory"},
            as_json,
        )
    return os.path.realpath(found)


def _beam_cli(given: str | None) -> str | None:
    if given:
        return os.path.abspath(given)
    beside = Path(sys.argv[0]).resolve().with_name("beam-cli")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("beam-cli")


def _fail(code: str, message: str, data: dict[str, Any] | None, as_json: bool) -> NoReturn:
    from beam_runtime.broker.fixes import fix_for

    details: dict[str, Any] = dict(data or {})
    details.setdefault("fix", fix_for(code, data))
    body = {"code": code, "message": message, "data": details}
    if as_json:
        sys.stderr.write(json.dumps({"error": body}, ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"error: {code}: {message}\nfix: {details['fix']}\n")
    raise SystemExit(1)


# ---------------------------------------------------------------------- printing


def _print(result: dict[str, Any], as_json: bool, text: Any) -> None:
    if as_json:
        out = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    elif text is not None:
        out = text(result)
    else:
        out = json.dumps(
            {k: v for k, v in result.items() if k != "workspace"}, ensure_ascii=False, indent=1
        )
    sys.stdout.write(out.rstrip("\n") + "\n")


def _sync_text(result: dict[str, Any]) -> str:
    diagnostics = result["diagnostics"]
    counts = diagnostics["counts"]
    state = "checked" if diagnostics.get("complete", True) else "still elaborating"
    summary = ", ".join(
        f"{counts.get(k, 0)} {k}{'' if counts.get(k, 0) == 1 else 's'}"
        for k in ("error", "warning")
    )
    lines = [f"{result['path']}: version {result['version']}, {state}: {summary}"]
    for item in diagnostics.get("items", []):
        start = item["range"]["start"]
        lines.append(
            f"{result['path']}:{start['line'] + 1}:{start['character'] + 1}: "
            f"{item['severity']}: {item['message']}"
        )
    return "\n".join(lines)


def _todo_text(result: dict[str, Any]) -> str:
    lines = []
    for item in result["items"]:
        at = item["run_at_position"]
        lines.append(
            f"{at['line'] + 1}:{at['character'] + 1}: {item['kind']}: "
            f"{item.get('message', '')}".rstrip()
        )
    return "\n".join(lines) or "nothing to do"
