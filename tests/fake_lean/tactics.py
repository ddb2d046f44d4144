"""A scripted tactic engine: enough goal behaviour for goals and speculative-execution tests.

The table of tactics is in README.md. The first failing tactic ends the proof, as Lean's error
recovery does; remaining goals at the end are reported as ``unsolved goals`` at ``by``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tests.fake_lean import exprs
from tests.fake_lean.config import Texts
from tests.fake_lean.model import ERROR, INFORMATION, CodeAction, Diag, Goal, GoalSpan, Hyp
from tests.fake_lean.source import Pos, idents, strip_comment

CLOSERS = frozenset(
    [
        "decide",
        "native_decide",
        "omega",
        "norm_num",
        "linarith",
        "nlinarith",
        "aesop",
        "tauto",
        "simp_all",
        "positivity",
        "contradiction",
    ]
)


class TacticError(Exception):
    def __init__(self, message: str, start: Pos, end: Pos) -> None:
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = end


@dataclass
class Tactic:
    text: str
    start: Pos
    end: Pos
    children: list[Tactic] | None = None


@dataclass
class ProofContext:
    texts: Texts
    type_of: Callable[[str], str | None]
    diags: list[Diag] = field(default_factory=list)
    spans: list[GoalSpan] = field(default_factory=list)
    actions: list[CodeAction] = field(default_factory=list)
    used_sorry: bool = False
    sleep_ms: float = 0.0


Seg = tuple[int, int, int]  # line, first column, end column


def parse_block(lines: list[str], after_by: Pos, last_line: int) -> list[Tactic]:
    segs: list[Seg] = []
    for number in range(after_by.line, last_line + 1):
        code = strip_comment(lines[number])
        first = after_by.col if number == after_by.line else 0
        body = code[first:]
        if body.strip():
            start = first + len(body) - len(body.lstrip())
            segs.append((number, start, len(code.rstrip())))
    on_by_line = bool(segs) and segs[0][0] == after_by.line and len(segs) > 1
    return _group(lines, segs, segs[1][1] if on_by_line else None)


def _group(lines: list[str], segs: list[Seg], block_col: int | None = None) -> list[Tactic]:
    if not segs:
        return []
    if block_col is None:
        block_col = segs[0][1]
    units: list[list[Seg]] = []
    for seg in segs:
        if not units or seg[1] <= block_col:
            units.append([seg])
        else:
            units[-1].append(seg)
    out: list[Tactic] = []
    for unit in units:
        out.extend(_unit(lines, unit))
    return out


def _unit(lines: list[str], unit: list[Seg]) -> list[Tactic]:
    line, col, end = unit[0]
    first = lines[line][col:end]
    start, stop = Pos(line, col), Pos(unit[-1][0], unit[-1][2])
    text = "\n".join(lines[n][c:e] for n, c, e in unit)
    if first.startswith(("·", ". ")):
        inner = col + 1 + (len(first[1:]) - len(first[1:].lstrip()))
        children = _group(lines, [(line, inner, end), *unit[1:]])
        return [Tactic(text, start, stop, children)]
    if len(unit) == 1 and "<;>" not in first and not first.startswith("fake_"):
        pieces = exprs.split_all(first, ";")
        if len(pieces) > 1:
            out = []
            for offset, piece in pieces:
                lead = len(piece) - len(piece.lstrip())
                begin = col + offset + lead
                out.append(
                    Tactic(piece.strip(), Pos(line, begin), Pos(line, begin + len(piece.strip())))
                )
            return [tactic for tactic in out if tactic.text]
    return [Tactic(text, start, stop)]


def run_proof(ctx: ProofContext, goals: list[Goal], by: Pos, tactics: list[Tactic]) -> None:
    """Run a ``by`` block; records spans and diagnostics in ``ctx``."""
    by_end = Pos(by.line, by.col + 2)
    ctx.spans.append(GoalSpan(by, by_end, goals, goals))
    try:
        remaining = run_tactics(ctx, tactics, goals)
    except TacticError as error:
        ctx.diags.append(Diag(error.start, error.end, ERROR, error.message))
        for span in ctx.spans:
            if span.after is None:
                span.after = span.before
        return
    if remaining:
        end = tactics[-1].end if tactics else by_end
        message = "unsolved goals\n" + "\n\n".join(goal.render() for goal in remaining)
        ctx.diags.append(Diag(by, end, ERROR, message, lean_tags=(1,)))
    elif not ctx.used_sorry:
        ctx.diags.append(Diag(by, by_end, INFORMATION, "Goals accomplished!", (2,), silent=True))


def run_tactics(ctx: ProofContext, tactics: list[Tactic], goals: list[Goal]) -> list[Goal]:
    for tactic in tactics:
        span = GoalSpan(tactic.start, tactic.end, goals, None, nested=tactic.children is not None)
        ctx.spans.append(span)
        goals = _step(ctx, tactic, goals, span)
        span.after = goals
    return goals


def _step(ctx: ProofContext, tactic: Tactic, goals: list[Goal], span: GoalSpan) -> list[Goal]:
    if tactic.children is not None:
        if not goals:
            raise TacticError(ctx.texts.no_goals(), tactic.start, tactic.end)
        rest = run_tactics(ctx, tactic.children, goals[:1])
        if rest:
            message = "unsolved goals\n" + "\n\n".join(goal.render() for goal in rest)
            raise TacticError(message, tactic.start, tactic.end)
        return goals[1:]
    name, _, args = tactic.text.partition(" ")
    name = name.strip()
    args = args.strip()
    if name in ("sleep", "skip"):
        ctx.sleep_ms += float(args) if name == "sleep" and args.isdigit() else 0.0
        return goals
    if name == "done":
        if goals:
            message = "unsolved goals\n" + "\n\n".join(goal.render() for goal in goals)
            raise TacticError(message, tactic.start, tactic.end)
        return goals
    if name in GOAL_FREE:
        return GOAL_FREE[name](ctx, tactic, args, goals, span)
    if not goals:
        raise TacticError(ctx.texts.no_goals(), tactic.start, tactic.end)
    handler = _HANDLERS.get(name)
    if handler is None:
        if name in CLOSERS:
            return goals[1:]
        raise TacticError(f"unknown tactic '{name}'", tactic.start, tactic.end)
    rest = handler(ctx, tactic, args, goals, span)
    _note_sorry_terms(ctx, args)
    return rest


def _note_sorry_terms(ctx: ProofContext, args: str) -> None:
    """A ``sorry`` term inside a tactic that succeeded (``exact sorry``, ``have h : T :=
    sorry``) puts ``sorryAx`` into the proof, as in Lean."""
    if any(token == "sorry" for _s, _e, token in idents(args)):
        ctx.used_sorry = True


def _sorry(ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan) -> list[Goal]:
    ctx.used_sorry = True
    return goals[1:]


def _trivially_true(goal: Goal) -> bool:
    target = exprs.strip_parens(goal.target)
    if target == "True" or exprs.is_reflexive(target):
        return True
    if any(exprs.norm(hyp.type) == exprs.norm(target) for hyp in goal.hyps):
        return True
    parts = exprs.split_top(target, " ∧ ")
    if parts:
        return all(_trivially_true(Goal(goal.hyps, part)) for part in parts)
    return False


def _trivial(ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan) -> list[Goal]:
    if _trivially_true(goals[0]):
        return goals[1:]
    raise TacticError("The `trivial` tactic failed to close the goal", t.start, t.end)


def _constructor(
    ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan
) -> list[Goal]:
    goal = goals[0]
    target = exprs.strip_parens(goal.target)
    if target == "True":
        return goals[1:]
    for sep, names, build in (
        (" ∧ ", ("left", "right"), lambda a, b: (a, b)),
        (" ↔ ", ("mp", "mpr"), lambda a, b: (f"{a} → {b}", f"{b} → {a}")),
    ):
        parts = exprs.split_top(target, sep)
        if parts:
            first, second = build(*parts)
            new = [Goal(goal.hyps, first, names[0]), Goal(goal.hyps, second, names[1])]
            return new + goals[1:]
    raise TacticError(
        "Tactic `constructor` failed: target is not an inductive datatype", t.start, t.end
    )


def _term_type(ctx: ProofContext, goal: Goal, term: str) -> str | None:
    for hyp in reversed(goal.hyps):
        if hyp.name == term:
            return hyp.type
    return ctx.type_of(term)


def check_idents(
    ctx: ProofContext, goal: Goal | None, text: str, origin: Pos, bound: set[str]
) -> None:
    """Raise the unknown-identifier error for the first name nothing binds."""
    local = {hyp.name for hyp in goal.hyps} if goal else set()
    local |= bound | binders_in(text)
    for start, end, name in idents(text):
        if name in local or name.split(".")[0] in local or ctx.type_of(name) is not None:
            continue
        if start > 0 and text[start - 1] == ".":
            continue
        raise TacticError(
            ctx.texts.unknown_ident(name),
            Pos(origin.line, origin.col + start),
            Pos(origin.line, origin.col + end),
        )


def binders_in(text: str) -> set[str]:
    """Names a term binds itself (``fun x =>``, ``∀ x,``, ``let x``...), found loosely."""
    names: set[str] = set()
    for pattern in (
        r"(?:fun|λ)\s+(.*?)(?:=>|↦)",
        r"[∀∃]\s*(.*?),",
        r"(?:let|have|obtain)\s+(.*?)(?::=|:)",
    ):
        for match in re.finditer(pattern, text):
            group = match.group(1).split(":")[0]
            names.update(name for _, _, name in idents(group))
    return names


def _exact(ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan) -> list[Goal]:
    goal = goals[0]
    origin = Pos(t.start.line, t.start.col + len("exact "))
    term = exprs.strip_parens(args)
    if term == "rfl":
        if exprs.is_reflexive(goal.target):
            return goals[1:]
        raise TacticError("The rfl tactic failed.", t.start, t.end)
    check_idents(ctx, goal, args, origin, set())
    actual = _term_type(ctx, goal, term) if re.fullmatch(r"[\w.'!?]+", term) else None
    if actual and exprs.norm(actual) != exprs.norm(exprs.strip_parens(goal.target)):
        message = ctx.texts.type_mismatch(term, actual, goal.target)
        raise TacticError(message, t.start, t.end)
    return goals[1:]


def _apply(ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan) -> list[Goal]:
    goal = goals[0]
    check_idents(ctx, goal, args, Pos(t.start.line, t.start.col + len("apply ")), set())
    actual = _term_type(ctx, goal, args.strip())
    if not actual:
        return goals[1:]
    if exprs.norm(actual) == exprs.norm(goal.target):
        return goals[1:]
    parts = exprs.split_top(actual, " → ")
    if parts and exprs.norm(parts[1]) == exprs.norm(goal.target):
        return [Goal(goal.hyps, parts[0], goal.case), *goals[1:]]
    raise TacticError(
        f"Tactic `apply` failed: could not unify the conclusion of `{args.strip()}`\n  {actual}\n"
        f"with the goal\n  {goal.target}",
        t.start,
        t.end,
    )


def _intro(ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan) -> list[Goal]:
    goal = goals[0]
    names = args.split() or ["a✝"]
    hyps, target = list(goal.hyps), exprs.strip_parens(goal.target)
    for name in names:
        forall = re.match(r"∀\s*\(?\s*([\w']+)\s*(?::\s*([^,)]*))?\)?\s*,\s*(.*)$", target)
        if forall:
            hyps.append(Hyp(name, (forall.group(2) or "?").strip()))
            target = exprs.replace_term(forall.group(3), forall.group(1), name) or forall.group(3)
            continue
        parts = exprs.split_top(target, " → ")
        if parts is None:
            raise TacticError("Tactic `intro` failed: no additional binders", t.start, t.end)
        hyps.append(Hyp(name, parts[0]))
        target = parts[1]
    return [Goal(tuple(hyps), target, goal.case), *goals[1:]]


def _assumption(
    ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan
) -> list[Goal]:
    goal = goals[0]
    if any(exprs.norm(hyp.type) == exprs.norm(goal.target) for hyp in goal.hyps):
        return goals[1:]
    raise TacticError("Tactic `assumption` failed", t.start, t.end)


def _rfl(ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan) -> list[Goal]:
    if exprs.is_reflexive(goals[0].target):
        return goals[1:]
    raise TacticError("The rfl tactic failed.", t.start, t.end)


def _simp_closes(goal: Goal) -> bool:
    target = exprs.strip_parens(goal.target)
    if target == "True" or exprs.is_reflexive(target, simp=True):
        return True
    parts = exprs.split_top(target, " ∧ ")
    return parts is not None and all(_simp_closes(Goal(goal.hyps, part)) for part in parts)


def _simp(ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan) -> list[Goal]:
    goal = goals[0]
    if not _simp_closes(goal):
        raise TacticError("simp made no progress", t.start, t.end)
    if t.text.startswith("simp?"):
        lemmas = [name for pattern, name in _SIMP_LEMMAS if re.search(pattern, goal.target)]
        suggestion = f"simp only [{', '.join(lemmas)}]" if lemmas else "simp only"
        ctx.diags.append(Diag(t.start, t.end, INFORMATION, ctx.texts.try_this(suggestion)))
        ctx.actions.append(CodeAction(f"Try this: {suggestion}", t.start, t.end, suggestion))
    return goals[1:]


def _suggest(ctx: ProofContext, t: Tactic, suggestion: str) -> None:
    """Lean's "Try this" information message and its eager code action."""
    ctx.diags.append(Diag(t.start, t.end, INFORMATION, ctx.texts.try_this(suggestion)))
    ctx.actions.append(CodeAction(f"Try this: {suggestion}", t.start, t.end, suggestion))


def _closing_term(goal: Goal) -> str | None:
    """What ``exact?`` finds: a hypothesis of the target's type, ``trivial`` or ``rfl``."""
    target = exprs.strip_parens(goal.target)
    for hyp in reversed(goal.hyps):
        if hyp.name and exprs.norm(hyp.type) == exprs.norm(target):
            return hyp.name
    if target == "True":
        return "trivial"
    return "rfl" if exprs.is_reflexive(target) else None


def _exact_search(
    ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan
) -> list[Goal]:
    found = _closing_term(goals[0])
    if found is None:
        message = "`exact?` could not close the goal. Try `apply?` to see partial suggestions."
        raise TacticError(message, t.start, t.end)
    _suggest(ctx, t, f"exact {found}")
    return goals[1:]


def _apply_search(
    ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan
) -> list[Goal]:
    """``apply?``: a closing term as ``exact?``, else ``refine h ?_`` for ``h : A → target``."""
    goal = goals[0]
    found = _closing_term(goal)
    if found is not None:
        _suggest(ctx, t, f"exact {found}")
        return goals[1:]
    for hyp in reversed(goal.hyps):
        parts = exprs.split_top(hyp.type, " → ")
        if parts and exprs.norm(parts[1]) == exprs.norm(goal.target):
            _suggest(ctx, t, f"refine {hyp.name} ?_")
            return [Goal(goal.hyps, parts[0], goal.case), *goals[1:]]
    raise TacticError("apply? didn't find any relevant lemmas", t.start, t.end)


def _aesop_search(
    ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan
) -> list[Goal]:
    """``aesop?`` (fake text): closes the main goal like ``aesop`` and suggests a script."""
    found = _closing_term(goals[0])
    _suggest(ctx, t, f"exact {found}" if found is not None else "simp_all")
    return goals[1:]


_SIMP_LEMMAS = (
    (r"\+ 0\b", "Nat.add_zero"),
    (r"\b0 \+", "Nat.zero_add"),
    (r"\* 1\b", "Nat.mul_one"),
)


def _rw(ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan) -> list[Goal]:
    goal = goals[0]
    line_text = t.text.split("\n")[0]
    open_at = line_text.find("[")
    close_at = line_text.rfind("]")
    if open_at < 0 or close_at < open_at:
        raise TacticError("Tactic `rewrite` failed: expected a list of rules", t.start, t.end)
    target = goal.target
    for offset, raw in exprs.split_all(line_text[open_at + 1 : close_at], ","):
        rule = raw.strip()
        lead = len(raw) - len(raw.lstrip())
        begin = Pos(t.start.line, t.start.col + open_at + 1 + offset + lead)
        end = Pos(begin.line, begin.col + len(rule))
        target = _rewrite_once(ctx, goal, target, rule, begin, end)
        s.steps.append((begin, [Goal(goal.hyps, target, goal.case), *goals[1:]]))
    if exprs.is_reflexive(target):
        return goals[1:]
    return [Goal(goal.hyps, target, goal.case), *goals[1:]]


def _rewrite_once(
    ctx: ProofContext, goal: Goal, target: str, rule: str, start: Pos, end: Pos
) -> str:
    backwards = rule.startswith(("←", "<-"))
    name = rule.lstrip("←<- ").strip()
    check_idents(ctx, goal, name, Pos(start.line, end.col - len(name)), set())
    equation = _term_type(ctx, goal, name) or ""
    equation = re.sub(r"^∀[^,]*,\s*", "", equation)
    parts = exprs.split_top(equation, " = ")
    if parts is None:
        return exprs.simplify(target) if equation == "" else target
    old, new = (parts[1], parts[0]) if backwards else parts
    rewritten = exprs.replace_term(target, old, new)
    if rewritten is None:
        raise TacticError(ctx.texts.rewrite_failed(old), start, end)
    return rewritten


def _all_goals(
    ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan
) -> list[Goal]:
    inner = Tactic(args, Pos(t.start.line, t.start.col + len("all_goals ")), t.end)
    out: list[Goal] = []
    for goal in goals:
        out.extend(_step(ctx, inner, [goal], GoalSpan(inner.start, inner.end, [goal], None)))
    return out


def _all_goals_or_none(
    ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan
) -> list[Goal]:
    """``all_goals t`` with no goals left does nothing, as in Lean."""
    return _all_goals(ctx, t, args, goals, s) if goals else goals


def _stop(ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan) -> list[Goal]:
    """``stop``: Lean's ``repeat sorry`` (the rest of its block is not modelled)."""
    if goals:
        ctx.used_sorry = True
    return []


def _have(ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan) -> list[Goal]:
    match = re.match(r"([\w']+)?\s*:\s*(.*?)\s*:=", args + " :=")
    if match is None:
        raise TacticError("Tactic `have` failed: expected `name : type := proof`", t.start, t.end)
    name = match.group(1) or "this"
    goal = goals[0]
    hyps = (*goal.hyps, Hyp(name, match.group(2).strip()))
    return [Goal(hyps, goal.target, goal.case), *goals[1:]]


def _show(ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan) -> list[Goal]:
    return [Goal(goals[0].hyps, args.strip(), goals[0].case), *goals[1:]]


def _fake_text(text: str) -> str:
    """Fake-only tactics write a line break inside a type or value as ``\\n``."""
    return text.strip().replace("\\n", "\n")


def _fake_hyp(
    ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan
) -> list[Goal]:
    """``fake_hyp NAMES : TYPE [::= VALUE]``: adds hypotheses (``_`` is an anonymous one)."""
    names, sep, rest = args.partition(" : ")
    if not sep:
        raise TacticError("fake_hyp: expected `names : type`", t.start, t.end)
    type_, _, value = rest.partition(" ::= ")
    goal = goals[0]
    added = tuple(
        Hyp("" if name == "_" else name, _fake_text(type_), _fake_text(value) if value else None)
        for name in names.split()
    )
    return [replace(goal, hyps=(*goal.hyps, *added)), *goals[1:]]


def _fake_target(
    ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan
) -> list[Goal]:
    """``fake_target TEXT``: replaces the main goal's target (``\\n`` for line breaks)."""
    return [replace(goals[0], target=_fake_text(args)), *goals[1:]]


def _fake_conv(
    ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan
) -> list[Goal]:
    """``fake_conv``: the main goal is shown as a conv goal (``| `` prefix)."""
    return [replace(goals[0], conv=True), *goals[1:]]


def _fake_case(
    ctx: ProofContext, t: Tactic, args: str, goals: list[Goal], s: GoalSpan
) -> list[Goal]:
    """``fake_case TAG``: tags the main goal (``case TAG``)."""
    return [replace(goals[0], case=args.strip() or None), *goals[1:]]


Handler = Callable[[ProofContext, Tactic, str, list[Goal], GoalSpan], list[Goal]]

# Tactics that also run when no goal is left (Lean's `all_goals` loops over none).
GOAL_FREE: dict[str, Handler] = {"all_goals": _all_goals_or_none, "stop": _stop}

_HANDLERS: dict[str, Handler] = {
    "sorry": _sorry,
    "admit": _sorry,
    "trivial": _trivial,
    "constructor": _constructor,
    "exact": _exact,
    "apply": _apply,
    "refine": _apply,
    "intro": _intro,
    "intros": _intro,
    "assumption": _assumption,
    "rfl": _rfl,
    "simp": _simp,
    "simp?": _simp,
    "exact?": _exact_search,
    "apply?": _apply_search,
    "aesop?": _aesop_search,
    "rw": _rw,
    "rewrite": _rw,
    "all_goals": _all_goals,
    "have": _have,
    "show": _show,
    "fake_hyp": _fake_hyp,
    "fake_target": _fake_target,
    "fake_conv": _fake_conv,
    "fake_case": _fake_case,
}
