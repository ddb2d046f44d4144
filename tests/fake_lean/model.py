"""Plain data shared by the fake's elaborator and its request handlers."""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.fake_lean import layout
from tests.fake_lean.source import Pos

ERROR, WARNING, INFORMATION = 1, 2, 3


@dataclass(frozen=True)
class Diag:
    start: Pos
    end: Pos
    severity: int
    message: str
    lean_tags: tuple[int, ...] = ()
    silent: bool = False


@dataclass(frozen=True)
class Hyp:
    name: str  # "" for an anonymous hypothesis
    type: str
    value: str | None = None


@dataclass(frozen=True)
class Goal:
    hyps: tuple[Hyp, ...]
    target: str
    case: str | None = None
    conv: bool = False

    def entries(self) -> list[layout.Entry]:
        names = layout.inaccessible([hyp.name for hyp in self.hyps])
        triples = zip(names, (h.type for h in self.hyps), (h.value for h in self.hyps), strict=True)
        return layout.grouped(triples)

    def render(self) -> str:
        """Lean's plain rendering: ``case`` line, grouped hypotheses, then the target."""
        return layout.goal_text(self.case, self.entries(), self.target, self.conv)

    def interactive(self, refs: layout.Refs, mvar: int) -> dict[str, object]:
        """This goal as ``getInteractiveGoals`` sends it."""
        return layout.interactive_goal(
            self.case, self.entries(), self.target, self.conv, refs, mvar
        )


def render_goals(goals: list[Goal]) -> dict[str, object]:
    """A ``$/lean/plainGoal`` result."""
    texts = [goal.render() for goal in goals]
    if not texts:
        return {"rendered": "no goals", "goals": []}
    rendered = "\n---\n".join(f"```lean\n{text}\n```" for text in texts)
    return {"rendered": rendered, "goals": texts}


@dataclass
class GoalSpan:
    """The goals before and after one tactic (``after is None``: the tactic failed).

    Lean answers the state before a tactic at its first character and the state after it
    anywhere later in it (and in the whitespace after it), except inside a tactic that holds
    nested tactics, where the state before is shown (``goalsAt?``'s ``useAfter``). ``rw`` has
    one step per rule, each seen the same way.
    """

    start: Pos
    end: Pos
    before: list[Goal]
    after: list[Goal] | None
    steps: list[tuple[Pos, list[Goal]]] = field(default_factory=list)  # (rule start, after it)
    nested: bool = False  # holds tactics of its own (a focusing dot)


@dataclass(frozen=True)
class Decl:
    """A named declaration, as hover, definition and symbol requests need it."""

    name: str  # fully qualified
    short: str
    keyword: str
    binders: str  # e.g. "(x y : Nat)"
    type: str
    uri: str
    start: Pos
    end: Pos
    name_start: Pos
    name_end: Pos
    doc: str | None = None
    value: str | None = None
    axioms: tuple[str, ...] = ()  # what `#print axioms` reports (sorted)
    attributes: str = ""  # the text inside `@[...]`
    modifiers: str = ""  # `private`, `unsafe`, ... as written
    uses: tuple[str, ...] = ()  # declarations it names
    importer_axioms: tuple[str, ...] | None = None  # `#print axioms` from an importing file

    @property
    def imported_axioms(self) -> tuple[str, ...]:
        """What an importing file's `#print axioms` reports (see `elab._axioms`)."""
        return self.axioms if self.importer_axioms is None else self.importer_axioms

    @property
    def signature(self) -> str:
        binders = f" {self.binders}" if self.binders else ""
        return f"{self.name}{binders} : {self.type}"


@dataclass(frozen=True)
class CodeAction:
    title: str
    start: Pos
    end: Pos
    new_text: str
    lazy: bool = False
