"""The agent skill `lean-beam setup` installs, built from the tool catalog.

`WHEN` says, for every tool of the catalog, when an agent should reach for it, and `GROUPS`
orders them by task. `render` joins the fixed guidance (the loop, the habits that save the most
turns, readiness, handles) with one line per catalog tool saying when to use it; the skill stays
short (under 600 words), since agents load it whole. `python -m beam_mcp.tools.generate`
writes the result into `beam_install/skill_text.py`, which setup installs (`beam_install` never
imports this package). Tests fail when a catalog tool has no line here, when a line names a
tool the catalog does not have, and when the generated file is stale.
"""

from __future__ import annotations

import textwrap

from beam_mcp.tools.catalog import NAMES

WIDTH = 96

WHEN: dict[str, str] = {
    "lean_sync": "after every edit: errors, readiness, the version",
    "lean_update": "to register an edit without waiting for Lean",
    "lean_refresh": "when diagnostics look stale or stuck",
    "lean_todo": "to list what is left in a file (sorry, holes, failing proofs)",
    "lean_code_action_resolve": "to see the edit a code action from lean_todo proposes",
    "lean_goals": "for the goals before or after a tactic",
    "lean_hover": "for the type and docs of a name",
    "lean_signature_help": "for the arguments an application still expects",
    "lean_definition": "to find where a name is defined",
    "lean_references": "to find every use of a name",
    "lean_document_symbols": "for an outline of a file",
    "lean_workspace_symbols": "to find a declaration by part of its name",
    "lean_search": "before guessing a lemma name",
    "lean_try": "to try many tactics at many positions in one call",
    "lean_run_at": "to try one command or tactic at a position",
    "lean_run_at_handle": "the same, keeping the state to continue from",
    "lean_run_with": "to continue from a handle, keeping it",
    "lean_run_with_linear": "to continue from a handle you will not need again",
    "lean_release": "to free handles",
    "lean_verify": "before you say a proof is done",
    "lean_save": "to checkpoint a finished file for the files importing it",
    "lean_close_save": "when done with a finished file",
    "lean_close": "when done with a file",
    "lean_drop_workspace": "after changing the lakefile, manifest or toolchain",
    "beam_version": "to see which runtime answers",
    "beam_stats": "when something seems slow",
    "beam_feedback_report": "to draft a report about lean-beam for the user",
}

GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Check a file", ("lean_sync", "lean_update", "lean_refresh", "lean_todo")),
    (
        "Read what Lean knows",
        (
            "lean_goals",
            "lean_hover",
            "lean_signature_help",
            "lean_definition",
            "lean_references",
            "lean_document_symbols",
            "lean_code_action_resolve",
        ),
    ),
    ("Find a name", ("lean_search", "lean_workspace_symbols")),
    (
        "Try without editing",
        (
            "lean_try",
            "lean_run_at",
            "lean_run_at_handle",
            "lean_run_with",
            "lean_run_with_linear",
            "lean_release",
        ),
    ),
    ("Finish", ("lean_verify", "lean_save", "lean_close_save", "lean_close")),
    ("Housekeeping", ("lean_drop_workspace", "beam_version", "beam_stats", "beam_feedback_report")),
)

INTRO = """\
# Working on Lean 4 with lean-beam

Every Lean tool takes `workspace: {"root": "/abs/project"}` (the directory with
`lean-toolchain` or the lakefile) and a `path` inside it. lean-beam never edits files: edit with
your own tools, then sync.

## The loop
1. Edit the file on disk.
2. `lean_sync` it: it waits for Lean and returns the `version`, diagnostics and `readiness`.
3. Act on the first error, or ask for goals. Never trust an answer older than your last edit.

## Habits that save turns
- Search before you guess a name: `lean_search` looks up name fragments or words of the
  statement in the project, its dependencies and the toolchain.
- Try many tactics at once: `lean_try` runs every tactic at every position in one call, on
  scratch copies; `suggest: true` adds `exact?`, `apply?`, `simp?` and `aesop?`.
- Give positions by text: `line1` (1-based) with `match` (text on that line), or `declaration`
  with `sorry`, rather than 0-based `line` and `character`.
- Verify before you say it is done: `lean_verify` builds what the file touches with Lake and
  checks every declaration's axioms; clean editor diagnostics are not a finished proof.

## Readiness
- `diagnostics.complete: true`: Lean finished; "no errors" means something only then.
- `reason: "stillElaborating"`: the answer is partial; call `lean_sync` again after
  `retry_after_ms`.
- An error's `data.fix` says what to do next.

## Handles
`lean_run_at_handle` and a successful `lean_try` return a handle to continue from (see below).
After an edit and sync, start again from a position.
"""

OUTRO = """\
## When something is off
In a terminal, `lean-beam doctor` checks the installation and the Lean toolchain.
"""


def _line(name: str) -> str:
    if name not in NAMES:
        raise KeyError(f"{name} is not in the tool catalog")
    body = f"- `{name}`: {WHEN[name]}."
    return textwrap.fill(body, WIDTH, subsequent_indent="  ", break_on_hyphens=False)


def render() -> str:
    """The skill's markdown after its front matter and ownership marker."""
    parts = [INTRO, "## Which tool when\n"]
    for title, names in GROUPS:
        parts.append(f"### {title}\n" + "\n".join(_line(name) for name in names) + "\n")
    parts.append(OUTRO)
    return "\n".join(parts)


MODULE_HEAD = '''"""The agent skill's text, generated from the tool catalog: do not edit.

Change `beam_mcp/tools/skill.py` or the catalog, then run `python -m beam_mcp.tools.generate`.
"""

BODY = """\\
'''


def render_module() -> str:
    """`beam_install/skill_text.py`: the rendered skill as a Python string constant."""
    body = render()
    assert '"""' not in body and "\\" not in body, "the skill text must stay a plain literal"
    return MODULE_HEAD + body + '"""\n'
