"""``lean_verify``: an answer from Lake's batch build and from Lean itself, never from the editor.

``prepare`` needs no Lean session: it resolves the files, reads the workspace's import graph,
takes the reverse dependency cone and the closure everything depends on, stamps those sources
and the covered files (``snapshot``), reads the policy and the lock and, given a receipt,
checks it (a valid one is answered by ``from_receipt`` without building). ``verify`` then runs
``lake build`` on the cone, asks each built file's module what it declares (``listing``), asks
a copy of its text for the axioms again (``axioms``), applies the policy and the lock
(``checks``), stamps the sources again and writes a new receipt.

``ok`` is true only when Lake built everything asked for and exited 0, Lean answered every
question, some declaration was checked, no declaration or source site is flagged, every locked
statement is unchanged and no covered file changed while the call ran. Everything shares one
deadline, ``wait_ms``; when it runs out the answer says ``complete: false`` and carries no
receipt. ``statements`` (for ``lean-beam lean lock``) answers the elaborated statements of the
files' declarations instead.
"""

from __future__ import annotations

import os
import time
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio

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
from beam_runtime.broker.verify import checks, snapshot
from beam_runtime.broker.verify import listing as ls
from beam_runtime.broker.verify import lock as lk
from beam_runtime.broker.verify import policy as pol
from beam_runtime.broker.verify import receipt as rc
from beam_runtime.broker.verify.cone import Graph, module_of, workspace_graph
from beam_runtime.broker.verify.lakebuild import BuildOutput, lake_build
from beam_runtime.broker.verify.save import LAKEFILES, has_lake_workspace
from beam_runtime.broker.verify.secret import receipt_key
from beam_runtime.search.sources import manifest_hash, toolchain_of

if TYPE_CHECKING:
    from beam_runtime.broker.arguments import VerifyArgs

_FIRST_ERRORS = 5
_RETRY_MS = 5000


class ScratchDocument(Protocol):
    async def load(self, text: str) -> OpenDocument: ...


class ScratchDocuments(Protocol):
    """Where questions to Lean run: the speculative scratch pool, handed in by the facade."""

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
    covered: list[str]  # the closure of the cone: every source the answer depends on
    subject: rc.Subject
    check: rc.Check | None
    receipt_in: dict[str, Any] | None
    names: list[str] | None  # declarations as the caller named them, in that order
    deadline: float  # time.monotonic()
    policy: pol.Policy
    locked: dict[str, lk.Locked]
    key: bytes
    stamps: dict[str, snapshot.Stamp]
    texts: dict[str, str]  # module (or lakefile name) -> text, as stamped
    watched: dict[str, str] = field(default_factory=dict)  # stamp key -> absolute path

    def left_s(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def display(self, module: str) -> str:
        return Path(self.graph.paths[module]).relative_to(self.root).as_posix()


async def _targets(root: str, names: list[str]) -> tuple[list[SourceFile], Graph, list[str]]:
    """The files named, the workspace's import graph and the files' modules."""
    files = [await resolve_source_async(root, name) for name in names]
    for source in files:
        await read_source_async(source)
    graph = await off_loop(partial(workspace_graph, root), root)
    return files, graph, [_module(root, source, graph) for source in files]


async def prepare(root: str, args: VerifyArgs) -> Plan:
    deadline = time.monotonic() + args.wait_ms / 1000
    files, graph, modules = await _targets(root, _paths_of(args))
    cone = graph.cone(modules)
    covered = graph.closure(cone)
    watched = {m: graph.paths[m] for m in covered}
    watched.update({name: os.path.join(root, name) for name in rc.COVERED_FILES})
    stamps, texts = await off_loop(partial(snapshot.take, watched), root)
    policy = await off_loop(partial(pol.load, root), root)
    locked = await off_loop(partial(lk.load, root), root)
    key = await off_loop(receipt_key, root)
    toolchain, manifest = await off_loop(lambda: (toolchain_of(root), manifest_hash(root)), root)
    subject = rc.Subject(
        root,
        sorted(source.display for source in files),
        sorted(args.declarations) if args.declarations is not None else None,
        toolchain,
        manifest,
        {name: stamps[name].digest for name in rc.COVERED_FILES},
        {m: stamps[m].digest if stamps[m].digest != "absent" else "missing" for m in covered},
    )
    check = rc.check(args.receipt, subject, key) if args.receipt is not None else None
    order = list(dict.fromkeys(args.declarations)) if args.declarations is not None else None
    return Plan(
        root,
        files,
        modules,
        graph,
        cone,
        covered,
        subject,
        check,
        args.receipt,
        order,
        deadline,
        policy,
        locked,
        key,
        stamps,
        {k: texts[k] for k in (*covered, *LAKEFILES) if k in texts},
        watched,
    )


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
    output = await _build(session, plan.cone, plan.left_s(), ctx)
    modules, built = _modules(plan, output)
    answers = await _ask_all(session, scratch, plan, built, ctx)
    return await _result(plan, output, modules, answers)


async def _build(
    session: LeanSession, targets: list[str], limit_s: float, ctx: Context
) -> BuildOutput:
    lake = _lake(session)
    ctx.progress(f"lean_verify: lake build of {len(targets)} module(s): {', '.join(targets)}")
    return await lake_build(
        lake,
        targets,
        cwd=session.root,
        env=session.launch.environment(),
        limit_s=limit_s,
        forward=lambda line: ctx.progress(f"lean_verify: {line}"),
    )


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
    """Per module of the cone (and each failed workspace module blocking it): built or not,
    and its first errors. A failure outside the workspace (a dependency package) leaves every
    module that imports from outside unbuilt."""
    by_module: dict[str, list[dict[str, Any]]] = {}
    for item in output.errors:
        module = module_of(plan.root, str(Path(plan.root, item["path"]).resolve()))
        by_module.setdefault(module or item["path"], []).append(item)
    failed = output.failed | set(by_module)
    outside = any(m not in plan.graph.paths for m in failed)
    clean_exit = output.finished and output.exit_code == 0
    listed = plan.cone + sorted(m for m in failed if m not in plan.cone and m in plan.graph.paths)
    modules: list[dict[str, Any]] = []
    built: set[str] = set()
    for module in listed:
        ok = clean_exit or (
            output.finished
            and bool(failed)
            and not plan.graph.upstream_failed(module, failed)
            and not (outside and plan.graph.reaches_outside(module))
        )
        if ok and module not in by_module:
            built.add(module)
        modules.append(
            {
                "module": module,
                "path": plan.display(module),
                "built": module in built,
                "errors": [_error(e) for e in by_module.get(module, [])[:_FIRST_ERRORS]],
            }
        )
    return modules, built


def _error(item: dict[str, Any]) -> dict[str, Any]:
    return {"path": item["path"], "line": item["line"], "message": item["message"]}


# ------------------------------------------------------------------ asking Lean


@dataclass
class Answers:
    modules: list[checks.ModuleAnswers]
    complete: bool  # every question was answered in time


async def _ask_all(
    session: LeanSession, scratch: ScratchDocuments, plan: Plan, built: set[str], ctx: Context
) -> Answers:
    found = [checks.ModuleAnswers(m, plan.display(m), plan.texts.get(m, "")) for m in plan.modules]
    complete = True
    by_module = lk.of_modules(plan.locked, plan.modules)
    for source, answer in zip(plan.files, found, strict=True):
        answer.built = answer.module in built
        if not answer.built:
            continue
        ctx.progress(f"lean_verify: asking Lean what {answer.module} declares")
        locked = [e.name for e in by_module[answer.module]]
        text = ls.scratch_text(answer.module, sorted(plan.graph.paths), locked)
        answer.listing = await _listing(session, scratch, source, text, plan.left_s())
        complete = complete and answer.listing is not None
    chosen = checks.resolve(plan.names, found) if plan.names is not None else None
    for source, answer in zip(plan.files, found, strict=True):
        if not answer.answered:
            continue
        assert answer.listing is not None
        wanted = chosen[answer.module] if chosen is not None else None
        names = [
            c.name
            for c in answer.listing.constants
            if c.written and (wanted is None or c.name in wanted)
        ]
        ctx.progress(f"lean_verify: #print axioms in a copy of {answer.module} ({len(names)})")
        complete = await _copy(session, scratch, plan, source, answer, names) and complete
    return Answers(found, complete)


async def _listing(
    session: LeanSession, scratch: ScratchDocuments, source: SourceFile, text: str, limit_s: float
) -> ls.Listing | None:
    with anyio.move_on_after(limit_s):
        async with scratch.borrow(session, source) as doc:
            mirror = await doc.load(text)
            return ls.parse(mirror.diagnostics)
    return None


async def _copy(
    session: LeanSession,
    scratch: ScratchDocuments,
    plan: Plan,
    source: SourceFile,
    answer: checks.ModuleAnswers,
    names: list[str],
) -> bool:
    text, first = ax.copy_text(answer.text, names)
    with anyio.move_on_after(plan.left_s()):
        async with scratch.borrow(session, source) as doc:
            mirror = await doc.load(text)
            replies = ax.answers(mirror.diagnostics, first, len(names))
            answer.copy = dict(zip(names, replies, strict=True))
            answer.sorry_lines = ax.sorry_lines(mirror.diagnostics, first)
            return True
    return False


# ------------------------------------------------------------------ the answer


async def _result(
    plan: Plan, output: BuildOutput, modules: list[dict[str, Any]], answers: Answers
) -> dict[str, Any]:
    decls, statements, checked = _declarations(plan, output, answers)
    flagged = list(dict.fromkeys(d["name"] for d in decls if d["flags"]))
    flagged += [s["name"] for s in statements if s["status"] != "unchanged"]
    complete = output.finished and answers.complete
    clean = output.finished and output.exit_code == 0
    clean = clean and all(m["built"] and not m["errors"] for m in modules)
    changed = await off_loop(partial(snapshot.changed, plan.stamps, plan.watched), plan.root)
    nothing = complete and clean and checked == 0
    outcome: dict[str, Any] = {
        "ok": complete and clean and not flagged and not changed and not nothing,
        "modules": modules,
        "declarations": decls,
        "flagged": list(dict.fromkeys(flagged)),
        "statements": statements,
        "policy": plan.policy.echo(),
    }
    if nothing:
        outcome["reason"] = "nothingChecked"
    result: dict[str, Any] = {
        "workspace": {"root": plan.root},
        **outcome,
        "complete": complete,
        "toolchain": plan.subject.toolchain,
        "manifest_hash": plan.subject.manifest_hash,
        "sources": plan.subject.sources,
        "build": _build_summary(plan, output),
        "receipt": rc.make(plan.subject, outcome, plan.key) if complete and not changed else None,
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


def _declarations(
    plan: Plan, output: BuildOutput, answers: Answers
) -> tuple[list[dict[str, Any]], list[dict[str, str]], int]:
    """Entries, statement statuses and how many constants were checked."""
    chosen = checks.resolve(plan.names, answers.modules) if plan.names is not None else None
    by_module = lk.of_modules(plan.locked, plan.modules)
    upstream = plan.graph.closure(plan.modules)
    decls: list[dict[str, Any]] = []
    statements: list[dict[str, str]] = []
    checked = 0
    for answer in answers.modules:
        answer.sites = pol.source_sites(answer.text, plan.policy, tactics=True)
        answer.sorry_lines = sorted(set(answer.sorry_lines) | _lake_sorries(plan, output, answer))
        if not answer.answered:
            decls += _unanswered(answer, chosen)
            continue
        names = chosen[answer.module] if chosen is not None else None
        decls += checks.module_entries(answer, names, plan.policy)
        checked += checks.checked_count(answer, names)
        statements += checks.statements(answer, by_module[answer.module])
    for module in upstream:
        if module not in plan.modules:
            sites = pol.source_sites(plan.texts.get(module, ""), plan.policy, tactics=False)
            decls += checks.site_entries(plan.display(module), sites)
    decls += _lakefile_entries(plan)
    return decls, statements, checked


def _unanswered(
    answer: checks.ModuleAnswers, chosen: dict[str, list[str]] | None
) -> list[dict[str, Any]]:
    if not answer.built:
        flag = "notBuilt"
    elif answer.listing is None:
        flag = "timedOut"
    else:
        flag = "noAnswer"
    names = chosen.get(answer.module) if chosen is not None else None
    entries = [checks.entry(n, None, [flag]) for n in names or [answer.module]]
    return entries + checks.site_entries(answer.path, answer.sites)


def _lake_sorries(plan: Plan, output: BuildOutput, answer: checks.ModuleAnswers) -> set[int]:
    return {
        int(item["line"])
        for item in output.warnings
        if ax.is_sorry_warning(item["message"])
        and os.path.normpath(item["path"]) == os.path.normpath(answer.path)
    }


def _lakefile_entries(plan: Plan) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for name in LAKEFILES:
        if name in plan.texts:
            sites = pol.lakefile_sites(name, plan.texts[name], plan.policy)
            entries += checks.site_entries(name, sites)
    return entries


def _build_summary(plan: Plan, output: BuildOutput) -> dict[str, Any]:
    summary: dict[str, Any] = {"exit_code": output.exit_code, "finished": output.finished}
    if not output.finished or output.exit_code != 0:
        summary["output_tail"] = output.tail()
    elsewhere = sorted(m for m in output.failed if m not in plan.graph.paths)
    if elsewhere:
        summary["failed_elsewhere"] = elsewhere
    return summary


# ------------------------------------------------------------------ statements, for the lock


async def statements(
    session: LeanSession, scratch: ScratchDocuments, args: VerifyArgs, ctx: Context
) -> dict[str, Any]:
    """The elaborated statement of each named declaration of the files (all the theorems
    written in them when none is named), for ``lean-beam lean lock``: ``{statements: {name:
    {module, path, statement_sha256, signature_sha256}}, not_found: [names]}``. The files'
    modules must build."""
    deadline = time.monotonic() + args.wait_ms / 1000
    root = session.root
    named = list(dict.fromkeys(args.paths)) if args.paths else [args.path or ""]
    files, graph, modules = await _targets(root, named)
    output = await _build(session, modules, deadline - time.monotonic(), ctx)
    if not (output.finished and output.exit_code == 0):
        raise _does_not_build(modules, output)
    workspace = sorted(graph.paths)
    answers: list[checks.ModuleAnswers] = []
    for source, module in zip(files, modules, strict=True):
        answer = checks.ModuleAnswers(module, source.display, "", built=True)
        text = ls.scratch_text(module, workspace, [])
        answer.listing = await _listing(session, scratch, source, text, deadline - time.monotonic())
        _require_answer(answer)
        answers.append(answer)
    chosen = checks.resolve(list(args.declarations), answers) if args.declarations else None
    found: dict[str, Any] = {}
    not_found: list[str] = []
    for source, answer in zip(files, answers, strict=True):
        assert answer.listing is not None
        known = {c.name: c for c in answer.listing.constants}
        names = (
            chosen[answer.module]
            if chosen is not None
            else [c.name for c in answer.listing.constants if c.written and c.kind == "theorem"]
        )
        not_found += [n for n in names if n not in known]
        names = [n for n in names if n in known]
        text = ls.scratch_text(answer.module, workspace, names)
        listing = await _listing(session, scratch, source, text, deadline - time.monotonic())
        answer.listing = listing
        _require_answer(answer)
        assert listing is not None
        source_text = (await read_source_async(source)).decode("utf-8")
        for name in names:
            found[name] = {
                "module": answer.module,
                "path": source.display,
                "statement_sha256": lk.statement_hash(listing.statements.get(name, "")),
                "signature_sha256": lk.signature_hash(source_text, known[name].line),
            }
            if name not in listing.statements:
                not_found.append(name)
                del found[name]
    return {"workspace": {"root": root}, "statements": found, "not_found": not_found}


def _require_answer(answer: checks.ModuleAnswers) -> None:
    if not answer.answered:
        raise BrokerError(
            "timeout",
            f"Lean did not say what {answer.module} declares in time",
            {"reason": "noAnswer", "module": answer.module, "fix": "retry with a larger --wait-ms"},
        )


def _does_not_build(modules: list[str], output: BuildOutput) -> BrokerError:
    return BrokerError(
        "invalidParams",
        f"{', '.join(modules)} did not build with Lake, so no statement can be locked",
        {
            "reason": "notBuilt",
            "errors": [_error(e) for e in output.errors[:_FIRST_ERRORS]],
            "output_tail": output.tail(),
            "fix": "fix the build errors (lean-beam lean verify FILE shows them), then lock again",
        },
    )
