"""Plain data shared by the fake's elaborator and its request handlers."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    name: str
    type: str


@dataclass(frozen=True)
class Goal:
    hyps: tuple[Hyp, ...]
    target: str
    case: str | None = None

    def render(self) -> str:
        """Lean's plain rendering: ``case`` line, grouped hypotheses, then the target."""
        lines = [f"case {self.case}"] if self.case else []
        group: list[str] = []
        group_type: str | None = None
        for hyp in self.hyps:
            if hyp.type == group_type:
                group.append(hyp.name)
                continue
            if group:
                lines.append(f"{' '.join(group)} : {group_type}")
            group, group_type = [hyp.name], hyp.type
        if group:
            lines.append(f"{' '.join(group)} : {group_type}")
        lines.append(f"⊢ {self.target}")
        return "\n".join(lines)


def render_goals(goals: list[Goal]) -> dict[str, object]:
    """A ``$/lean/plainGoal`` result."""
    texts = [goal.render() for goal in goals]
    if not texts:
        return {"rendered": "no goals", "goals": []}
    rendered = "\n---\n".join(f"```lean\n{text}\n```" for text in texts)
    return {"rendered": rendered, "goals": texts}


@dataclass
class GoalSpan:
    """The goals before and after one tactic (``after is None``: the tactic failed)."""

    start: Pos
    end: Pos
    before: list[Goal]
    after: list[Goal] | None
    steps: list[tuple[Pos, list[Goal]]] = field(default_factory=list)


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
