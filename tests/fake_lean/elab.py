"""Elaborating one top-level command: diagnostics, goals, declarations and scripted effects."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from tests.fake_lean import exprs
from tests.fake_lean.config import Texts
from tests.fake_lean.library import KEYWORDS, auto_bound, builtin_type
from tests.fake_lean.listing import answer_listing, is_listing
from tests.fake_lean.model import (
    ERROR,
    INFORMATION,
    WARNING,
    CodeAction,
    Decl,
    Diag,
    Goal,
    GoalSpan,
    Hyp,
)
from tests.fake_lean.prefixes import split_prefixes
from tests.fake_lean.source import IDENT_RE, Command, Pos, idents, strip_comment
from tests.fake_lean.tactics import ProofContext, TacticError, check_idents, parse_block, run_proof

DECL_RE = re.compile(
    r"^\s*(?:@\[[^\]]*\]\s*)?((?:(?:private|protected|noncomputable|partial|unsafe|nonrec)\s+)*)"
    r"(theorem|lemma|def|example|abbrev|instance|structure|inductive|class|opaque|axiom)\b"
)
MARKER_RE = re.compile(r"^#fake_(crash_once|crash|die)\b\s*(\d*)")
TRACE_RE = re.compile(r"^#fake_trace\s+([\w.]+)\s*(.*)$")


@dataclass
class Env:
    """Names visible to a command: earlier declarations, namespaces and ``open``s."""

    decls: dict[str, Decl] = field(default_factory=dict)
    namespaces: tuple[str, ...] = ()
    opens: tuple[str, ...] = ()
    variables: dict[str, str] = field(default_factory=dict)

    def resolve(self, name: str) -> Decl | None:
        for depth in range(len(self.namespaces), -1, -1):
            prefix = ".".join(self.namespaces[:depth])
            found = self.decls.get(f"{prefix}.{name}" if prefix else name)
            if found:
                return found
        for opened in self.opens:
            found = self.decls.get(f"{opened}.{name}")
            if found:
                return found
        return None

    def type_of(self, name: str) -> str | None:
        decl = self.resolve(name)
        if decl is not None:
            return decl.type if not decl.binders else ""
        if name in self.variables:
            return self.variables[name]
        return builtin_type(name)


@dataclass
class CmdResult:
    command: Command
    diags: list[Diag] = field(default_factory=list)
    spans: list[GoalSpan] = field(default_factory=list)
    term_goals: list[tuple[Pos, Pos, str]] = field(default_factory=list)
    actions: list[CodeAction] = field(default_factory=list)
    decls: list[Decl] = field(default_factory=list)
    locals: dict[str, str] = field(default_factory=dict)
    namespaces: tuple[str, ...] = ()
    opens: tuple[str, ...] = ()
    variables: dict[str, str] = field(default_factory=dict)
    container: tuple[str, str] | None = None  # ("open"|"close", name) for namespace/section
    sleep_ms: float = 0.0
    crash: tuple[str, int] | None = None
    die: bool = False


class _Cursor:
    """Maps offsets in a command's text to document positions."""

    def __init__(self, command: Command) -> None:
        self.start = command.start
        self.starts = [0]
        for line in command.text.split("\n"):
            self.starts.append(self.starts[-1] + len(line) + 1)

    def pos(self, offset: int) -> Pos:
        line = 0
        while line + 1 < len(self.starts) and self.starts[line + 1] <= offset:
            line += 1
        return Pos(self.start + line, offset - self.starts[line])


def elaborate(
    command: Command, lines: list[str], env: Env, texts: Texts, uri: str, doc: str | None
) -> CmdResult:
    result = CmdResult(command, namespaces=env.namespaces, opens=env.opens)
    result.variables = dict(env.variables)
    first = command.text.lstrip()
    if first.startswith(("--", "/-")):
        return result
    marker = MARKER_RE.match(first)
    if marker:
        if marker.group(1) == "die":
            result.die = True
        else:
            result.crash = (marker.group(1), int(marker.group(2) or 134))
        return result
    cursor = _Cursor(command)
    trace = TRACE_RE.match(first.split("\n")[0])
    if trace:  # fake-only: one trace message, as `set_option trace.<class> true in` would give
        text = f"[{trace.group(1)}] {trace.group(2).strip()}"
        end = cursor.pos(len(first.split("\n")[0]))
        result.diags.append(Diag(cursor.pos(0), end, INFORMATION, text))
        return result
    code = "\n".join(strip_comment(line) for line in command.text.split("\n"))
    prefixed = split_prefixes(code)
    if prefixed.code is not code:  # `open X in`, `set_option o v in`, `@[...]` folded in
        code = prefixed.code
        env = replace(env, opens=(*env.opens, *prefixed.opens))
    if DECL_RE.match(code):
        _declaration(result, code, cursor, lines, env, texts, uri, doc, prefixed.attributes)
    elif is_listing(command.text):
        answer_listing(result, command.text, cursor.pos(0), cursor.pos(len("#eval")), env, uri)
    elif re.match(r"#print\s+axioms\b", code):
        _print_axioms(result, code, cursor, env, uri)
    elif code.startswith(("#eval", "#check", "#reduce", "#print")):
        _output_command(result, code, cursor, env, texts)
    else:
        _scoping(result, code, cursor, env)
    return result


def _scoping(result: CmdResult, code: str, cursor: _Cursor, env: Env) -> None:
    words = code.split()
    head, rest = words[0], words[1:]
    if head == "namespace" and rest:
        result.namespaces = (*env.namespaces, *rest[0].split("."))
        result.container = ("open", rest[0])
    elif head == "section":
        result.container = ("open", rest[0] if rest else "<section>")
    elif head == "end":
        if rest and env.namespaces[-len(rest[0].split(".")) :] == tuple(rest[0].split(".")):
            result.namespaces = env.namespaces[: -len(rest[0].split("."))]
        result.container = ("close", rest[0] if rest else "")
    elif head == "open":
        result.opens = (*env.opens, *[word for word in rest if word not in ("in", "scoped")])
    elif head == "variable":
        for names, type_ in _binder_groups(code[len("variable") :]):
            for name in names:
                result.variables[name] = type_
    elif head not in ("set_option", "universe", "attribute", "noncomputable", "#exit", "sleep"):
        end = cursor.pos(len(head))
        result.diags.append(
            Diag(cursor.pos(0), end, ERROR, "unexpected identifier; expected command")
        )
    if head == "sleep" and rest and rest[0].isdigit():
        result.sleep_ms += float(rest[0])


def _binder_groups(text: str) -> list[tuple[list[str], str]]:
    groups: list[tuple[list[str], str]] = []
    for match in re.finditer(r"[({\[⦃]([^(){}\[\]⦃⦄]*)[)}\]⦄]", text):
        inner = match.group(1)
        if ":" in inner:
            names, _, type_ = inner.partition(":")
            groups.append((names.split(), exprs.norm(type_)))
        else:
            groups.append((["inst✝"], exprs.norm(inner)))
    return groups


def _split_signature(sig: str) -> tuple[str, str]:
    """(binders, type) of the part between the name and ``:=``."""
    depth = 0
    for index, char in enumerate(sig):
        if char in "([{⦃⟨":
            depth += 1
        elif char in ")]}⦄⟩":
            depth -= 1
        elif char == ":" and depth == 0 and not sig.startswith(":=", index):
            return sig[:index].strip(), exprs.norm(sig[index + 1 :])
    return sig.strip(), ""


def _declaration(
    result: CmdResult,
    code: str,
    cursor: _Cursor,
    lines: list[str],
    env: Env,
    texts: Texts,
    uri: str,
    doc: str | None,
    attributes: str = "",
) -> None:
    match = DECL_RE.match(code)
    assert match is not None
    keyword, modifiers = match.group(2), match.group(1)
    kw_start, after_kw = match.start(2), match.end(2)
    name_match = re.compile(r"\s+([^\s(\[{:⦃]+)").match(code, after_kw)
    named = keyword != "example" and name_match is not None and name_match.group(1) != ":="
    if keyword == "instance" and named and name_match and name_match.group(1) in (":",):
        named = False
    if named and name_match:
        name, name_off, sig_off = name_match.group(1), name_match.start(1), name_match.end(1)
    else:
        name, name_off, sig_off = "", kw_start, after_kw
    assign = _find_assign(code, sig_off)
    sig = code[sig_off:assign] if assign >= 0 else code[sig_off:]
    for stop in (" where", "\n|", " extends"):
        if keyword in ("structure", "inductive", "class") and stop in sig:
            sig = sig[: sig.index(stop)]
    binders, type_ = _split_signature(sig)
    if keyword in ("structure", "inductive", "class"):
        type_ = type_ or "Type"
    hyps = tuple(Hyp(n, t) for names, t in _binder_groups(binders) for n in names)
    result.locals = {hyp.name: hyp.type for hyp in hyps}
    ctx = ProofContext(texts, env.type_of)
    if keyword == "instance" and not named:
        name = _instance_name(type_)
    full = f"{'.'.join(env.namespaces)}.{name}" if env.namespaces and name else name
    try:
        checked = code[: sig_off + len(sig)] if keyword in INDUCTIVE_KINDS else code
        _check_signature(ctx, binders, type_, checked, sig_off, cursor, env)  # not the fields
        if assign >= 0:
            body_off = assign + 2
            _body(result, ctx, code, body_off, cursor, lines, hyps, type_, name)
    except TacticError as error:
        ctx.diags.append(Diag(error.start, error.end, ERROR, error.message))
    result.diags.extend(ctx.diags)
    result.spans.extend(ctx.spans)
    result.actions.extend(ctx.actions)
    result.sleep_ms += ctx.sleep_ms
    has_error = any(diag.severity == ERROR for diag in result.diags)
    if ctx.used_sorry and not has_error:
        start = cursor.pos(name_off if named else kw_start)
        length = len(name) if named else len(keyword)
        end = Pos(start.line, start.col + length)
        result.diags.append(Diag(start, end, WARNING, texts.sorry()))
    if named or keyword == "instance":
        value = code[assign + 2 :].strip() if assign >= 0 else None
        sorry = ctx.used_sorry or has_error
        body = code[match.start(1) :]  # attributes name other declarations but do not use them
        axioms, importer_view, uses = _axioms(keyword, full, body, env, sorry, uri, texts.legacy)
        decl = Decl(
            name=full,
            short=name,
            keyword=keyword,
            binders=binders,
            type=type_,
            uri=uri,
            start=cursor.pos(len(code) - len(code.lstrip())),
            end=cursor.pos(len(code.rstrip())),
            name_start=cursor.pos(name_off if named else kw_start),
            name_end=cursor.pos((name_off + len(name)) if named else after_kw),
            doc=doc,
            value=value if value and re.fullmatch(r'\d+|"[^"]*"', value) else None,
            axioms=axioms,
            attributes=attributes,
            modifiers=modifiers,
            uses=uses,
            importer_axioms=importer_view,
        )
        result.decls.append(decl)


def _axioms(
    keyword: str, full: str, code: str, env: Env, sorry: bool, uri: str, legacy: bool
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The fake's `#print axioms`: sorry (or an error) gives sorryAx, axioms used by name count,
    so do those of the declarations used, the simp family of tactics uses propext and
    `native_decide` an axiom of its own (`Lean.ofReduceBool` before Lean 4.29).

    Returns (axioms as the defining file sees them, axioms as an importing file sees them,
    declarations used). The importer's view models Lean's `collectAxioms` from 4.30 on
    (leanprover/lean4#15226): an imported inductive type reports no axioms, and neither does
    anything whose only path to an axiom runs through one. The legacy profile has no such gap.
    """
    if keyword == "axiom":
        return (full,), (full,), ()
    own = {"sorryAx"} if sorry else set()
    here: set[str] = set()
    seen_by_importer: set[str] = set()
    uses: list[str] = []
    tokens = [token for line in code.split("\n") for _s, _e, token in idents(line)]
    for token in tokens:
        if token in STANDARD_AXIOMS:
            own.add(token)
        elif token in PROPEXT_TACTICS:
            own.add("propext")
        elif token == "native_decide":
            own.add(
                "Lean.ofReduceBool"
                if legacy
                else f"{full or '_example'}._native.native_decide.ax_1"
            )
        decl = env.resolve(token)
        if decl is None or decl.name == full:
            continue
        uses.append(decl.name)
        if decl.keyword == "axiom":
            here.add(decl.name)
            seen_by_importer.add(decl.name)
            continue
        local = decl.uri == uri or legacy
        here.update(decl.axioms if local else decl.imported_axioms)
        seen_by_importer.update(decl.axioms if legacy else decl.imported_axioms)
    importer_view = () if keyword in INDUCTIVE_KINDS and not legacy else own | seen_by_importer
    return tuple(sorted(own | here)), tuple(sorted(importer_view)), tuple(dict.fromkeys(uses))


def _instance_name(type_: str) -> str:
    """Lean's name for an anonymous instance: `inst` and the type's constants, capitalised."""
    parts = [m.group(0).split(".")[-1] for m in IDENT_RE.finditer(type_)]
    return "inst" + "".join(part[:1].upper() + part[1:] for part in parts if part)


STANDARD_AXIOMS = ("propext", "Classical.choice", "Quot.sound")
PROPEXT_TACTICS = ("simp", "simp_all", "norm_num", "linarith", "omega")
INDUCTIVE_KINDS = ("structure", "inductive", "class")


def _print_axioms(result: CmdResult, code: str, cursor: _Cursor, env: Env, uri: str) -> None:
    """`#print axioms name`, in Lean's wording (an imported declaration as an importer sees it)."""
    name = code[len("#print") :].split(None, 1)[1].strip() if len(code.split()) > 2 else ""
    start, end = cursor.pos(0), cursor.pos(len("#print"))
    decl = env.resolve(name)
    axioms = () if decl is None else decl.axioms if decl.uri == uri else decl.imported_axioms
    if decl is None:
        result.diags.append(Diag(start, end, ERROR, f"unknown constant '{name}'"))
    elif axioms:
        listed = ", ".join(axioms)
        result.diags.append(
            Diag(start, end, INFORMATION, f"'{decl.name}' depends on axioms: [{listed}]")
        )
    else:
        text = f"'{decl.name}' does not depend on any axioms"
        result.diags.append(Diag(start, end, INFORMATION, text))


def _find_assign(code: str, start: int) -> int:
    depth = 0
    for index in range(start, len(code) - 1):
        char = code[index]
        if char in "([{⦃⟨":
            depth += 1
        elif char in ")]}⦄⟩":
            depth -= 1
        elif depth == 0 and code.startswith(":=", index):
            return index
    return -1


def _check_signature(
    ctx: ProofContext, binders: str, type_: str, code: str, sig_off: int, cursor: _Cursor, env: Env
) -> None:
    bound: set[str] = set()
    sig = code[sig_off:]
    for start, end, name in idents(sig.split(":=")[0]):
        if name in KEYWORDS or name in bound or auto_bound(name) or env.type_of(name) is not None:
            bound.add(name)
            continue
        if _is_binder_name(sig, start, end):
            bound.add(name)
            continue
        pos = cursor.pos(sig_off + start)
        raise TacticError(ctx.texts.unknown_ident(name), pos, Pos(pos.line, pos.col + end - start))


def _is_binder_name(sig: str, start: int, end: int) -> bool:
    """True when the token sits before the ``:`` of a binder group or a quantifier."""
    before = sig[:start]
    opener = max(before.rfind(c) for c in "([{⦃∀∃")
    closer = max(before.rfind(c) for c in ")]}⦄,")
    if opener <= closer:
        return False
    return ":" not in sig[opener:start]


def _body(
    result: CmdResult,
    ctx: ProofContext,
    code: str,
    body_off: int,
    cursor: _Cursor,
    lines: list[str],
    hyps: tuple[Hyp, ...],
    type_: str,
    name: str,
) -> None:
    body = code[body_off:]
    lead = len(body) - len(body.lstrip())
    start_off = body_off + lead
    stripped = body.strip()
    if re.match(r"by\b", stripped):
        by = cursor.pos(start_off)
        goal = Goal(hyps, type_ or "?m")
        tactics = parse_block(lines, Pos(by.line, by.col + 2), result.command.end)
        run_proof(ctx, [goal], by, tactics)
        return
    origin = cursor.pos(start_off)
    bound = {hyp.name for hyp in hyps} | {name}
    for index, text in enumerate(stripped.split("\n")):
        line_origin = origin if index == 0 else Pos(origin.line + index, 0)
        check_idents(ctx, None, text, line_origin, bound | set(KEYWORDS))
        for start, end, token in idents(text):
            if token == "sorry":
                ctx.used_sorry = True
                rendered = Goal(hyps, type_ or "?m").render()
                result.term_goals.append(
                    (
                        Pos(line_origin.line, line_origin.col + start),
                        Pos(line_origin.line, line_origin.col + end),
                        rendered,
                    )
                )


def _output_command(result: CmdResult, code: str, cursor: _Cursor, env: Env, texts: Texts) -> None:
    head = code.split()[0]
    arg = exprs.norm(code[len(head) :])
    start, end = cursor.pos(0), cursor.pos(len(head))
    try:
        check = ProofContext(texts, env.type_of)
        check_idents(check, None, arg, cursor.pos(len(head) + 1), set(KEYWORDS))
    except TacticError as error:
        result.diags.append(Diag(error.start, error.end, ERROR, error.message))
        return
    result.diags.append(Diag(start, end, INFORMATION, _output_text(head, arg, env)))


def _output_text(head: str, arg: str, env: Env) -> str:
    value = exprs.eval_nat(arg)
    decl = env.resolve(arg)
    if head == "#eval":
        if value is not None:
            return str(value)
        if decl is not None and decl.value is not None:
            return decl.value
        return arg
    if decl is not None:
        return decl.signature
    known = builtin_type(arg)
    if known:
        return f"{arg} : {known}"
    if value is not None:
        return f"{arg} : Nat"
    return f"{arg} : ?"
