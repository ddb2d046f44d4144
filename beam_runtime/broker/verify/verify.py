"""``lean_verify``: an answer from Lake's batch build, never from the editor's view.

``prepare`` needs no Lean session: it resolves the files, reads the workspace's import graph,
takes the reverse dependency cone and, given a receipt, checks it (a valid one is answered by
``from_receipt`` without building). ``verify`` then runs ``lake build`` on the cone, asks the
built modules for each declaration's axioms in a scratch document, and writes a new receipt.
``ok`` is true only when the build finished, every module of the cone built without errors and
no declaration is flagged. Everything shares one deadline, ``wait_ms``; when it runs out the
answer says ``complete: false`` and carries no receipt.
"""

from __future__ import annotations

import time
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from beam_runtime import safe_read
from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.session.documents import OpenDocument
from beam_runtime.broker.session.paths import (
    SourceFile,
    off_loop,
    read_source_async,
    resolve_source_async,
)
from beam_runtime.broker.session.reporting import Context
from beam_runtime.broker.session.session import LeanSession
from beam_runtime.broker.verify import axioms as ax
from beam_runtime.broker.verify import receipt as rc
from beam_runtime.broker.verify.cone import Graph, module_of, workspace_graph
from beam_runtime.broker.verify.lakebuild import BuildOutput, lake_build
from beam_runtime.broker.verify.save import has_lake_workspace
from beam_runtime.search.scan import Declaration, declarations
from beam_runtime.search.sources import manifest_hash, toolchain_of

if TYPE_CHECKING:
    from beam_runtime.broker.arguments import VerifyArgs

_FIRST_ERRORS = 5
_RETRY_MS = 5000


class ScratchDocument(Protocol):
    async def load(self, text: str) -> OpenDocument: ...


class ScratchDocuments(Protocol):
    """Where axiom questions run: the speculative scratch pool, handed in by the facade."""

    def borrow(
        self, session: LeanSession, source: SourceFile
    ) -> AbstractAsyncContextManager[ScratchDocument]: ...


@dataclass
class Plan:
    root: str
    files: list[SourceFile]
    modules: list[str]  # the files' modules, in the order given
    graph: Graph
    cone: list[str]
    subject: rc.Subject
    check: rc.Check | None
    receipt_in: dict[str, Any] | None
    names: list[str] | None  # declarations as the caller named them, in that order
    deadline: float  # time.monotonic()

    def left_s(self) -> float:
        return max(0.0, self.deadline - time.monotonic())


async def prepare(root: str, args: VerifyArgs) -> Plan:
    deadline = time.monotonic() + args.wait_ms / 1000
    names = _paths_of(args)
    files = [await resolve_source_async(root, name) for name in names]
    for source in files:
        await read_source_async(source)
    graph = await off_loop(partial(workspace_graph, root), root)
    modules = [_module(root, source, graph) for source in files]
    cone = graph.cone(modules)
    sources = await off_loop(partial(rc.hashes, graph, cone), root)
    requested = sorted(args.declarations) if args.declarations is not None else None
    targets = sorted(source.display for source in files)
    toolchain, manifest = await off_loop(lambda: (toolchain_of(root), manifest_hash(root)), root)
    subject = rc.Subject(root, targets, requested, toolchain, manifest, sources)
    check = None
    if args.receipt is not None:
        check = rc.check(rc.parse(args.receipt), subject)
    order = list(dict.fromkeys(args.declarations)) if args.declarations is not None else None
    return Plan(root, files, modules, graph, cone, subject, check, args.receipt, order, deadline)


def _paths_of(args: VerifyArgs) -> list[str]:
    path, paths = args.path, args.paths
    if path is not None and paths is None:
        return [path]
    if path is None and paths:
        return list(dict.fromkeys(paths))
    raise BrokerError(
        "invalidInput",
        "lean_verify needs exactly one of path and paths (a non-empty list)",
        {"reason": "pathOrPaths", "fix": "pass path for one file or paths for several"},
    )


def _module(root: str, source: SourceFile, graph: Graph) -> str:
    module = module_of(root, source.abs_path)
    if module is None or module not in graph.paths:
        raise BrokerError(
            "invalidParams",
            f"{source.display} is not a module of this workspace, so Lake cannot build it",
            {
                "reason": "notAModule",
                "path": source.display,
                "fix": "name a .lean file under the workspace root whose path is a module name",
            },
        )
    return module


def from_receipt(plan: Plan) -> dict[str, Any]:
    """The answer when the receipt still holds: its own outcome, nothing rebuilt."""
    receipt = plan.receipt_in or {}
    return {
        "workspace": {"root": plan.root},
        **rc.outcome_of(receipt),
        "complete": True,
        "toolchain": plan.subject.toolchain,
        "manifest_hash": plan.subject.manifest_hash,
        "sources": plan.subject.sources,
        "receipt": receipt,
        "receipt_valid": True,
        "stale": [],
    }


async def verify(
    session: LeanSession, scratch: ScratchDocuments, plan: Plan, ctx: Context
) -> dict[str, Any]:
    lake = _lake(session)
    ctx.progress(f"lean_verify: lake build of {len(plan.cone)} module(s): {', '.join(plan.cone)}")
    output = await lake_build(
        lake,
        plan.cone,
        cwd=plan.root,
        env=session.launch.environment(),
        limit_s=plan.left_s(),
        forward=lambda line: ctx.progress(f"lean_verify: {line}"),
    )
    modules, built = _modules(plan, output)
    decls, answered = await _declarations(session, scratch, plan, built, ctx)
    return _result(plan, output, modules, decls, answered)


def _lake(session: LeanSession) -> str:
    lake = session.launch.lake
    if lake is None or not has_lake_workspace(session.root):
        raise BrokerError(
            "saveUnsupportedSetup",
            "lean_verify needs a Lake workspace served by `lake serve` (this session runs "
            f"{session.launch.argv[0]}, or the root has no lakefile)",
            {
                "reason": "noLakeWorkspace",
                "fix": "start lean-beam-mcp through its installed wrapper in a Lake project",
            },
        )
    return lake


def _modules(plan: Plan, output: BuildOutput) -> tuple[list[dict[str, Any]], set[str]]:
    by_module: dict[str, list[dict[str, Any]]] = {}
    for item in output.errors:
        module = module_of(plan.root, str(Path(plan.root, item["path"]).resolve()))
        by_module.setdefault(module or item["path"], []).append(item)
    failed = output.failed | set(by_module)
    clean_exit = output.finished and output.exit_code == 0
    listed = plan.cone + sorted(m for m in failed if m not in plan.cone and m in plan.graph.paths)
    modules: list[dict[str, Any]] = []
    built: set[str] = set()
    for module in listed:
        ok = clean_exit or (
            output.finished and bool(failed) and not plan.graph.upstream_failed(module, failed)
        )
        if ok and module not in by_module:
            built.add(module)
        path = plan.graph.paths[module]
        modules.append(
            {
                "module": module,
                "path": Path(path).relative_to(plan.root).as_posix(),
                "built": module in built,
                "errors": [_error(plan, e) for e in by_module.get(module, [])[:_FIRST_ERRORS]],
            }
        )
    return modules, built


def _error(plan: Plan, item: dict[str, Any]) -> dict[str, Any]:
    return {"path": item["path"], "line": item["line"], "message": item["message"]}


def _module_declarations(plan: Plan) -> dict[str, list[Declaration]]:
    """The declarations of each verified module, read from disk (in a pool thread)."""
    found = {}
    for module in plan.modules:
        try:
            data = safe_read.read_regular(plan.graph.paths[module], safe_read.SOURCE_CAP)
        except OSError:
            data = b""
        found[module] = declarations(data.decode("utf-8", "replace"))
    return found


async def _declarations(
    session: LeanSession, scratch: ScratchDocuments, plan: Plan, built: set[str], ctx: Context
) -> tuple[list[dict[str, Any]], bool]:
    requested = plan.names
    found = await off_loop(partial(_module_declarations, plan), plan.root)
    wanted = _assign(plan, found, requested)
    out: list[dict[str, Any]] = []
    answered = True
    for source, module in zip(plan.files, plan.modules, strict=True):
        names = wanted.get(module, [])
        if not names:
            continue
        if module not in built:
            out += [ax.entry(name, None, ["notBuilt"]) for name in names]
            continue
        ctx.progress(f"lean_verify: #print axioms for {len(names)} declaration(s) of {module}")
        results = await _ask(session, scratch, source, module, names, plan.left_s())
        answered = answered and results is not None
        for index, name in enumerate(names):
            axioms, problem = results[index] if results is not None else (None, "timedOut")
            decl = ax.lookup(name, found[module])
            out.append(ax.entry(name, axioms, ax.flags(axioms, decl, problem)))
    return out, answered


def _assign(
    plan: Plan, found: dict[str, list[Declaration]], requested: list[str] | None
) -> dict[str, list[str]]:
    """Which names to ask each file's module about."""
    if requested is None:
        return {module: ax.default_names(found[module]) for module in plan.modules}
    wanted: dict[str, list[str]] = {}
    for name in requested:
        home = next((m for m in plan.modules if ax.lookup(name, found[m])), plan.modules[0])
        decl = ax.lookup(name, found[home])
        wanted.setdefault(home, []).append(decl.name if decl else name)
    return wanted


async def _ask(
    session: LeanSession,
    scratch: ScratchDocuments,
    source: SourceFile,
    module: str,
    names: list[str],
    limit_s: float,
) -> list[tuple[list[str] | None, str]] | None:
    with anyio.move_on_after(limit_s):
        async with scratch.borrow(session, source) as doc:
            mirror = await doc.load(ax.scratch_text(module, names))
            return ax.answers(mirror.diagnostics, len(names))
    return None


def _result(
    plan: Plan,
    output: BuildOutput,
    modules: list[dict[str, Any]],
    decls: list[dict[str, Any]],
    answered: bool,
) -> dict[str, Any]:
    flagged = [d["name"] for d in decls if d["flags"]]
    complete = output.finished and answered
    clean = all(m["built"] and not m["errors"] for m in modules)
    after = rc.hashes(plan.graph, plan.cone)
    changed = sorted(m for m in plan.cone if after.get(m) != plan.subject.sources.get(m))
    outcome = {
        "ok": complete and clean and not flagged and not changed,
        "modules": modules,
        "declarations": decls,
        "flagged": flagged,
    }
    result: dict[str, Any] = {
        "workspace": {"root": plan.root},
        **outcome,
        "complete": complete,
        "toolchain": plan.subject.toolchain,
        "manifest_hash": plan.subject.manifest_hash,
        "sources": plan.subject.sources,
        "build": _build_summary(output),
        "receipt": rc.make(plan.subject, outcome) if complete and not changed else None,
    }
    if changed:
        result["changed_during_verify"] = changed
    if not complete:
        result["retry_after_ms"] = _RETRY_MS
    if plan.check is not None:
        result["receipt_valid"] = False
        result["stale"] = plan.check.stale
        if plan.check.mismatch:
            result["receipt_mismatch"] = plan.check.mismatch
    return result


def _build_summary(output: BuildOutput) -> dict[str, Any]:
    summary: dict[str, Any] = {"exit_code": output.exit_code, "finished": output.finished}
    if not output.finished or output.exit_code != 0:
        summary["output_tail"] = output.tail()
    return summary
