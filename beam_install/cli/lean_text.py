"""How `lean-beam lean` prints a tool's result for a person, and its errors in the CLI's words.

Goals print as Lean's goal view shows them (`case`, hypotheses with names sharing a type on one
line, `⊢` before the target); a probe prints its verdict and the goals it left; `try` one line
per tactic; `verify` a verdict line and then what failed; `search` one line per declaration.
Error messages and fixes come from the broker, which words them for MCP arguments; `cli_words`
turns those names into this command's flags.
"""

from __future__ import annotations

import re
from typing import Any

# MCP argument and tool names -> what a person types here, longest first.
_NAME = r"(?<![-\w.`])"  # a name standing alone, not already a flag or a command
_WORDS: tuple[tuple[str, str], ...] = (
    (_NAME + r"line1\+match\[\+occurrence\]", "--line1 with --match [--occurrence]"),
    (_NAME + r"line1\+match", "--line1 with --match"),
    (_NAME + r"line\+character", "--line with --character"),
    (_NAME + r"declaration\+sorry", "--declaration with --sorry"),
    (_NAME + r"workspace\.root", "--root"),
    (_NAME + r"wait_ms\b", "--wait-ms"),
    (_NAME + r"line1\b", "--line1"),
    (_NAME + r"stop_on_first_success\b", "--stop-on-first-success"),
    (r"\(or suggest: true\)", "(or --suggest)"),
    (r"tactic texts in tactics\b", "--tactic flags"),
    (_NAME + r"lean_(sync|goals|hover|run_at|try|todo|verify|search)\b", r"`lean-beam lean \1`"),
    (r"\bcall (it )?again\b", r"run it again"),
    (r"\bcall the tool again\b", "run the command again"),
    (r"\bthe argument the message names\b", "the flag the message names"),
)


def cli_words(text: str) -> str:
    """`text` with MCP argument and tool names replaced by this command's flags and commands."""
    for pattern, replacement in _WORDS:
        text = re.sub(pattern, replacement, text)
    text = re.sub(_NAME + r"tactics\[(\d+)\]", lambda m: f"--tactic {int(m[1]) + 1}", text)
    return re.sub(r"`lean-beam lean run_at`", "`lean-beam lean run-at`", text)


def _where(result: dict[str, Any]) -> str:
    position = result.get("position") or {}
    line, character = position.get("line", 0), position.get("character", 0)
    return f"{result.get('path', '')}:{line + 1}:{character + 1}"


def _plural(count: int, word: str) -> str:
    return f"{count or 'no'} {word}{'' if count == 1 else 's'}"


def goal_text(goal: dict[str, Any]) -> str:
    """One goal as Lean shows it: `case`, hypotheses, then `⊢ target` (`| target` in conv)."""
    lines = [f"case {goal['userName']}"] if goal.get("userName") else []
    for hyp in goal.get("hyps", []):
        names = " ".join(hyp.get("names") or ["_"])
        value = f" := {hyp['value']}" if hyp.get("value") is not None else ""
        lines.append(f"{names} : {hyp.get('type', '')}{value}")
    mark = "|" if goal.get("kind") == "conv" else "⊢"
    lines.append(f"{mark} {goal.get('target', '')}")
    return "\n".join(lines)


def goals_text(goals: list[dict[str, Any]]) -> str:
    if not goals:
        return "no goals"
    return "\n\n".join(goal_text(goal) for goal in goals)


def goals(result: dict[str, Any]) -> str:
    found = result.get("goals") or []
    head = f"{_where(result)} ({result.get('mode', 'before')}): {_plural(len(found), 'goal')}"
    return head + "\n" + goals_text(found)


def hover(result: dict[str, Any]) -> str:
    contents = result.get("contents")
    if isinstance(contents, dict):
        text = str(contents.get("value", ""))
    elif isinstance(contents, list):
        text = "\n\n".join(c.get("value", "") if isinstance(c, dict) else str(c) for c in contents)
    else:
        text = "" if contents is None else str(contents)
    lines = [line for line in text.splitlines() if not line.strip().startswith("```")]
    body = "\n".join(lines).strip()
    return f"{_where(result)}: " + (body if body else "no hover information")


def _messages(messages: list[dict[str, Any]]) -> list[str]:
    shown = []
    for message in messages:
        text = str(message.get("message") or message.get("text") or "").strip()
        if text:
            shown.append(f"{message.get('severity', 'info')}: {text}")
    return shown


def run_at(result: dict[str, Any]) -> str:
    verdict = "succeeded" if result.get("success") else "failed"
    state = result.get("proof_state")
    lines = [f"{_where(result)}: {verdict}"]
    lines += _messages(result.get("messages") or [])
    if state is not None:
        left = state.get("goals") or []
        lines.append(f"{_plural(len(left), 'goal')} left" + (":" if left else ""))
        if left:
            lines.append(goals_text(left))
    return "\n".join(lines)


def _at(position: dict[str, Any]) -> str:
    return f"{position.get('line', 0) + 1}:{position.get('character', 0) + 1}"


def trying(result: dict[str, Any]) -> str:
    """One line per tactic and position, in the order tried, from the grouped answer."""
    path = result.get("path", "")
    tactics = result.get("tactics") or []
    errors = result.get("errors") or []
    lines = []
    for entry in result.get("positions") or []:
        where = f"{path}:{_at(entry['position'])}"
        said: dict[int, str] = {}
        for group in entry.get("succeeded") or []:
            left = f"{_plural(group.get('goals_after') or 0, 'goal')} left"
            first = f" (first: {group['first_goal']})" if group.get("first_goal") else ""
            for index in group["tactics"]:
                said[index] = f"ok, {left}{first}"
        for group in entry.get("failed") or []:
            if "error" in group:
                error = " ".join(str(errors[group["error"]]).split())
            else:
                error = "uses sorry" if group.get("reason") == "usesSorry" else group.get("reason")
            for index in group["tactics"]:
                said[index] = f"failed: {error}"
        for group in entry.get("skipped") or []:
            for index in group["tactics"]:
                said[index] = f"skipped ({group['reason']})"
        for index in sorted(said):
            lines.append(f"[{index + 1}] {where}  {tactics[index]}: {said[index]}")
        for suggestion in entry.get("suggestions") or []:
            lines.append(f"    {where}  try this: {suggestion['text']}")
    omitted = result.get("omitted")
    if omitted:
        lines.append("left out: " + ", ".join(f"{k} {v}" for k, v in sorted(omitted.items())))
    return "\n".join(lines) or "nothing ran"


def verify(result: dict[str, Any]) -> str:
    """`verified: ...` in one line, or `NOT verified: N problems` and one line per problem."""
    modules = result.get("modules") or []
    declarations = result.get("declarations") or []
    if result.get("ok"):
        axioms = sorted({a for d in declarations for a in d.get("axioms") or []})
        names = ", ".join(m.get("module", "?") for m in modules)
        return (
            f"verified: {_plural(len(modules), 'module')} built ({names}), "
            f"{_plural(len(declarations), 'declaration')} checked, "
            f"axioms: {', '.join(axioms) if axioms else 'none'}"
        )
    problems = _verify_problems(result, modules, declarations)
    head = f"NOT verified: {_plural(len(problems), 'problem')}"
    return "\n".join([head, *problems])


def _verify_problems(
    result: dict[str, Any], modules: list[dict[str, Any]], declarations: list[dict[str, Any]]
) -> list[str]:
    problems = []
    if result.get("reason"):
        problems.append(f"nothing verified: {result['reason']}")
    if result.get("complete") is False:
        wait = result.get("retry_after_ms")
        again = f"; run again in {wait} ms or with a larger --wait-ms" if wait else ""
        problems.append(f"Lake did not finish within --wait-ms{again}")
    for module in modules:
        errors = module.get("errors") or []
        for error in errors:
            problems.append(
                f"{error.get('path')}:{error.get('line')}: error: {error.get('message')}"
            )
        if not module.get("built") and not errors:
            problems.append(f"{module.get('path') or module.get('module')}: not built")
    flagged = set(result.get("flagged") or [])
    for declaration in declarations:
        if declaration.get("name") in flagged:
            flags = ", ".join(declaration.get("flags") or []) or "flagged"
            axioms = declaration.get("axioms")
            used = f" (axioms: {', '.join(axioms) or 'none'})" if axioms is not None else ""
            problems.append(f"{declaration['name']}: {flags}{used}")
    statements = result.get("statements") or []
    for statement in statements:
        if statement.get("status") not in (None, "unchanged"):
            problems.append(f"{statement.get('name')}: statement {statement['status']}")
    shown = {d.get("name") for d in declarations} | {s.get("name") for s in statements}
    problems += [f"{name}: flagged" for name in sorted(flagged - shown)]
    return problems


def _declared(hit: dict[str, Any]) -> str:
    """The signature with its full name (the source spells the name inside its namespaces)."""
    signature, name = str(hit.get("signature", "")), str(hit.get("name", ""))
    written = signature.split(maxsplit=1)[0] if signature else ""
    if written and name.endswith(written) and (name == written or name[-len(written) - 1] == "."):
        return name + signature[len(written) :]
    return signature or name


def search(result: dict[str, Any]) -> str:
    hits = result.get("hits") or []
    lines = [f"{hit['path']}:{hit['line']}: {hit['kind']} {_declared(hit)}" for hit in hits]
    return "\n".join(lines) or f"no declarations found ({result.get('indexed_files', 0)} files)"
