"""`lean-beam lean sync|goals|hover|run-at|try|todo|verify FILE`, `search QUERY`: Lean from a shell;
`lean-beam lean lock FILE...`.

`lock` records the elaborated statements of the files' theorems in the project's statement lock
(`.lean-beam/statements.lock`), which `lean_verify` then holds them to, and `lock --check`
compares them without writing.

Each command runs one broker operation in-process (no MCP server): it starts Lean for the
project, prints the result for a person (`lean_text`; `--json`: the tool's result as compact
JSON), stops Lean and exits 1 when Lean reports errors (or the probe fails), 1 with
`error:`/`fix:` on stderr for a tool error, worded with this command's flags. Lean is started
with `--lean-cmd`, else through `--beam-cli` (default: the `beam-cli` next to this command, else
on PATH).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import time
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
    """Tactic goals at a position of FILE, as Lean shows them."""
    result = _run("lean_goals", options, {"mode": options["mode"]})
    _print(result, options["as_json"], _text("goals"))


@lean.command("hover")
@_common
@_position
def hover(**options: Any) -> None:
    """Hover information at a position of FILE."""
    _print(_run("lean_hover", options, {}), options["as_json"], _text("hover"), options["file"])


@lean.command("run-at")
@_common
@_position
@click.option("--text", required=True, help="Command or tactic text to try at the position.")
def run_at(**options: Any) -> None:
    """Try text at a position of FILE (never written to disk); exit 1 when it fails."""
    result = _run("lean_run_at", options, {"text": options["text"]})
    _print(result, options["as_json"], _text("run_at"), options["file"])
    raise SystemExit(0 if result.get("success") else 1)


@lean.command("try")
@_common
@_position
@click.option(
    "--tactic", "tactics", multiple=True, help="A tactic to try at the position (repeatable)."
)
@click.option("--stop-on-first-success", is_flag=True, help="Stop once one tactic succeeds.")
@click.option("--limit", type=click.IntRange(1, 1024), help="Run at most this many tactics.")
@click.option("--suggest", is_flag=True, help="Also run exact?, apply?, simp? (aesop?).")
def try_(**options: Any) -> None:
    """Try several tactics at a position of FILE at once; exit 1 when none succeeds."""
    from beam_runtime.broker.standalone import At

    at = At(**_position_of(options))
    extra = {
        "positions": [at],
        "tactics": list(options["tactics"]),
        "stop_on_first_success": options["stop_on_first_success"],
        "limit": options["limit"],
        "suggest_tactics": options["suggest"],
    }
    result = _run("lean_try", options, extra, positioned=False)
    _print(result, options["as_json"], _text("trying"))
    succeeded = any(entry.get("succeeded") for entry in result.get("positions") or [])
    raise SystemExit(0 if succeeded else 1)


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
    _print(result, options["as_json"], _text("verify"))
    raise SystemExit(0 if result.get("ok") else 1)


@lean.command("search")
@click.argument("query")
@click.option(
    "--root",
    help="Project root (default: nearest directory with a lean-toolchain or lakefile above "
    "the current directory).",
)
@click.option(
    "--kind",
    type=click.Choice(
        [
            "theorem",
            "lemma",
            "def",
            "abbrev",
            "instance",
            "structure",
            "inductive",
            "class",
            "opaque",
            "axiom",
        ]
    ),
    help="Only declarations of this kind (theorem includes lemma).",
)
@click.option("--limit", type=click.IntRange(1, 100), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="The tool's result as JSON.")
def search(query: str, root: str | None, kind: str | None, limit: int, as_json: bool) -> None:
    """Declarations of the project and its dependencies matching QUERY; exit 1 when none."""
    import anyio

    from beam_runtime.broker.errors import BrokerError
    from beam_runtime.broker.standalone import Call, config, run_once

    where = _root(root, os.getcwd(), as_json)
    call = Call(path="", query=query, kind=kind, limit=limit)
    try:
        result: dict[str, Any] = anyio.run(run_once, config(None, None), where, "lean_search", call)
    except BrokerError as error:
        _fail(error.code, error.message, error.data, as_json)
    _print(result, as_json, _text("search"))
    raise SystemExit(0 if result.get("hits") else 1)


@lean.command("lock")
@click.argument("files", nargs=-1, required=True)
@click.option(
    "--declarations",
    help="Comma-separated names to lock (full, or a unique suffix); default: every theorem "
    "of the files.",
)
@click.option(
    "--root",
    help="Project root (default: nearest directory with a lean-toolchain or lakefile above "
    "the first FILE).",
)
@click.option(
    "--check", is_flag=True, help="Compare with the lock, write nothing; exit 1 on a change."
)
@click.option("--json", "as_json", is_flag=True, help="The outcome as JSON.")
@click.option(
    "--wait-ms",
    type=click.IntRange(min=0),
    default=600_000,
    show_default=True,
    help="How long to wait for Lake and Lean.",
)
@click.option("--lean-cmd", help="Command that starts a Lean server in the root.")
@click.option("--beam-cli", help="beam-cli that configures the project (mcp-config).")
def lock(**options: Any) -> None:
    """Lock the statements of FILE's theorems (or --declarations) for lean_verify to hold."""
    from beam_runtime.broker.errors import BrokerError
    from beam_runtime.broker.verify import lock as lk

    files = [os.path.abspath(f) for f in options["files"]]
    root = _root(options["root"], os.path.dirname(files[0]), options["as_json"])
    shown = {Path(os.path.relpath(f, root)).as_posix() for f in files}
    try:
        entries = lk.load(root)
    except BrokerError as error:
        if options["check"] or options["declarations"]:
            _fail(error.code, error.message, error.data, options["as_json"])
        entries = {}  # locking whole files anew replaces an unreadable lock
    if options["check"]:
        _check_lock(options, root, files, {n: e for n, e in entries.items() if e.path in shown})
        return
    named = [n.strip() for n in (options["declarations"] or "").split(",") if n.strip()]
    found = _statements(options, root, files, named or None)
    if named and found["not_found"]:
        _fail(
            "invalidParams",
            f"not declared in {', '.join(sorted(shown))}: {', '.join(found['not_found'])}",
            {
                "reason": "notFound",
                "names": found["not_found"],
                "fix": "name declarations of "
                "the files (lean-beam lean verify FILE --json lists them)",
            },
            options["as_json"],
        )
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    dropped = [] if named else sorted(n for n, e in entries.items() if e.path in shown)
    kept = {n: e for n, e in entries.items() if n not in dropped}
    for name, item in found["statements"].items():
        kept[name] = lk.Locked(name, **item, locked_at=stamp)
    path = _write_lock(root, lk.document(kept))
    locked = sorted(found["statements"])
    unlocked = [n for n in dropped if n not in found["statements"]]
    body = {"schema": 1, "lock": path, "locked": locked, "unlocked": unlocked}
    text = "\n".join(
        [f"locked {n}" for n in locked] + [f"unlocked {n}" for n in unlocked] + [f"wrote {path}"]
    )
    _print(body, options["as_json"], lambda _result: text)


def _check_lock(
    options: dict[str, Any], root: str, files: list[str], entries: dict[str, Any]
) -> None:
    statements: list[dict[str, str]] = []
    if entries:
        found = _statements(options, root, files, sorted(entries))["statements"]
        for name in sorted(entries):
            now = found.get(name)
            if now is None:
                state = "missing"
            elif now["statement_sha256"] == entries[name].statement_sha256:
                state = "unchanged"
            else:
                state = "changed"
            statements.append({"name": name, "status": state})
    body = {"schema": 1, "statements": statements}
    text = "\n".join(f"{s['name']}: {s['status']}" for s in statements) or "nothing locked"
    _print(body, options["as_json"], lambda _result: text)
    raise SystemExit(0 if all(s["status"] == "unchanged" for s in statements) else 1)


def _statements(
    options: dict[str, Any], root: str, files: list[str], names: list[str] | None
) -> dict[str, Any]:
    from beam_runtime.broker.standalone import Call

    call = Call(path=files[0], paths=files, declarations=names, wait_ms=options["wait_ms"])
    return _execute("lean_statements", options, root, call)


def _write_lock(root: str, body: dict[str, Any]) -> str:
    """Writes the lock atomically (a temporary file, then a rename); returns its path."""
    from beam_runtime.broker.verify.lock import LOCK_FILE

    path = Path(root, LOCK_FILE)
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", "utf-8")
    os.replace(tmp, path)
    return str(path)


# ---------------------------------------------------------------------- running


_FORMS = (("line", "character"), ("line1", "match"), ("declaration", "sorry"))
_FLAGS = "--line with --character, --line1 with --match, or --declaration with --sorry"


def _position_of(options: dict[str, Any]) -> dict[str, Any]:
    """The position flags, checked here so a wrong form fails before Lean starts."""
    position: dict[str, Any] = {
        k: options.get(k)
        for k in ("line", "character", "line1", "occurrence", "declaration", "sorry")
    }
    position["match"] = options.get("match_text")
    given = [form for form in _FORMS if any(position[name] is not None for name in form)]
    as_json = options["as_json"]
    if len(given) != 1:
        fix = {"fix": "pass exactly one of them"}
        _fail("invalidInput", f"name the position in exactly one way: {_FLAGS}", fix, as_json)
    missing = [name for name in given[0] if position[name] is None and name != "sorry"]
    if missing:
        partner = next(name for name in given[0] if name not in missing)
        _fail(
            "invalidInput",
            f"--{missing[0]} is missing (it goes with --{partner})",
            {"fix": f"pass --{missing[0]} too"},
            as_json,
        )
    return position


def _run(
    tool: str, options: dict[str, Any], extra: dict[str, Any], positioned: bool | None = None
) -> dict[str, Any]:
    from beam_runtime.broker.standalone import Call

    file = os.path.abspath(options["file"])
    root = _root(options["root"], os.path.dirname(file), options["as_json"])
    if positioned is None:
        positioned = "line1" in options
    position = _position_of(options) if positioned else {}
    call = Call(path=file, wait_ms=options["wait_ms"], **position, **extra)
    return _execute(tool, options, root, call)


def _execute(tool: str, options: dict[str, Any], root: str, call: Any) -> dict[str, Any]:
    import anyio

    from beam_runtime.broker.errors import BrokerError
    from beam_runtime.broker.standalone import config, run_once

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


def _root(given: str | None, near: str, as_json: bool) -> str:
    """`--root`, else the nearest Lean project at or above the directory `near`."""
    from beam_runtime.toolchain import find_project_root

    if given is not None:
        return os.path.realpath(given)
    found = find_project_root(Path(near))
    if found is None:
        _fail(
            "invalidInput",
            f"no Lean project (lean-toolchain or lakefile) at or above {near}",
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
    from beam_install.cli.lean_text import cli_words
    from beam_runtime.broker.fixes import fix_for

    details: dict[str, Any] = dict(data or {})
    details["fix"] = cli_words(str(details.get("fix") or fix_for(code, data)))
    message = cli_words(message)
    body = {"code": code, "message": message, "data": details}
    if as_json:
        sys.stderr.write(json.dumps({"error": body}, ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"error: {code}: {message}\nfix: {details['fix']}\n")
    raise SystemExit(1)


# ---------------------------------------------------------------------- printing


def _text(name: str) -> Any:
    from beam_install.cli import lean_text

    return getattr(lean_text, name)


def _print(result: dict[str, Any], as_json: bool, text: Any, path: str | None = None) -> None:
    if as_json:
        out = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    elif text is not None:
        out = text({"path": path, **result} if path is not None else result)
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
