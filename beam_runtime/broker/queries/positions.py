"""The position forms of the position tools (docs/MCP.md#positions), resolved against a text.

A caller names a position in exactly one way: ``line`` + ``character`` (0-based, UTF-16 units),
``line1`` + ``match`` (+ ``occurrence``: the first character of the K-th match on that 1-based
line), or ``declaration`` + ``sorry`` (the K-th ``sorry`` token inside that declaration's source
range). Declarations are found in the text: top-level declaration keywords under the enclosing
``namespace`` blocks; a name matches its full name or a dotted suffix of it when that is unique.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from beam_runtime.broker.errors import BrokerError, invalid_input
from beam_runtime.broker.session.text import DocumentText, utf16_len

if TYPE_CHECKING:
    from beam_runtime.broker.arguments import PositionForm

# Patterns as text, compiled where they are used (``re`` keeps them compiled): a call that names
# its position by line and character, the usual case, compiles none of them.
_SORRY = r"(?<![\w.'])sorry(?![\w'])"
_TOP_LEVEL = r"^\S"
_MODIFIERS = r"(?:(?:@\[[^\]]*\]|private|protected|noncomputable|partial|unsafe|nonrec)\s+)*"
_KEYWORDS = r"(?:theorem|lemma|def|abbrev|instance|example|structure|class|inductive|opaque|axiom)"
_DECLARATION = rf"^{_MODIFIERS}{_KEYWORDS}\s+(?:\(priority[^)]*\)\s+)?([^\s:({{\[]+)"
_NAMESPACE = r"^(namespace|section|end)\b\s*([^\s]*)"

LINE_FORM = ("line", "character")
MATCH_FORM = ("line1", "match", "occurrence")
SORRY_FORM = ("declaration", "sorry")


class Declaration(NamedTuple):  # immutable; cheaper to define than a frozen dataclass
    name: str  # full name, namespaces included
    first: int  # 0-based line of its keyword
    stop: int  # 0-based line of the next top-level line (exclusive end)


def resolve(text: DocumentText, args: PositionForm) -> tuple[int, int]:
    """The checked 0-based (line, character) the arguments name."""
    forms = [form for form in (LINE_FORM, MATCH_FORM, SORRY_FORM) if _given(args, form)]
    if len(forms) != 1:
        raise invalid_input(
            "name the position in exactly one way: line+character, line1+match or "
            "declaration+sorry",
            "positionForm",
            given=[name for form in forms for name in form if _get(args, name) is not None],
        )
    form = forms[0]
    if form is LINE_FORM:
        line, character = _required(args, "line"), _required(args, "character")
    elif form is MATCH_FORM:
        line, character = _match(
            text, _required(args, "line1"), _required(args, "match"), _get(args, "occurrence") or 1
        )
    else:
        line, character = _sorry(text, _required(args, "declaration"), _get(args, "sorry") or 1)
    text.check_position(line, character)
    return line, character


def echo(line: int, character: int) -> dict[str, int]:
    return {"line": line, "character": character}


def _get(args: PositionForm, name: str) -> Any:
    return getattr(args, name, None)


def _given(args: PositionForm, form: tuple[str, ...]) -> bool:
    return any(_get(args, name) is not None for name in form)


def _required(args: PositionForm, name: str) -> Any:
    value = _get(args, name)
    if value is None:
        partner = {
            "line": "character",
            "character": "line",
            "line1": "match",
            "match": "line1",
            "declaration": "sorry",
        }.get(name, name)
        raise invalid_input(
            f"{name} is missing (it goes with {partner})", "positionForm", missing=name
        )
    return value


def _match(text: DocumentText, line1: int, needle: str, occurrence: int) -> tuple[int, int]:
    lines = text.lines
    if not 1 <= line1 <= len(lines):
        raise _no_match(
            f"line1 {line1} is outside the file ({len(lines)} lines, 1-based)",
            line1=line1,
            line_count=len(lines),
        )
    line = lines[line1 - 1]
    found = _occurrences(line, needle)
    if not needle or len(found) < occurrence:
        raise _no_match(
            f"{needle!r} occurs {len(found)} time(s) on line {line1}, not {occurrence}",
            line1=line1,
            match=needle,
            occurrence=occurrence,
            found=len(found),
            line_text=line[:200],
        )
    return line1 - 1, utf16_len(line[: found[occurrence - 1]])


def _occurrences(line: str, needle: str) -> list[int]:
    found: list[int] = []
    start = line.find(needle) if needle else -1
    while start >= 0:
        found.append(start)
        start = line.find(needle, start + 1)
    return found


def _sorry(text: DocumentText, name: str, index: int) -> tuple[int, int]:
    found = find_declaration(text, name)
    tokens = sorry_tokens(text, found)
    if len(tokens) < index:
        raise _no_match(
            f"{found.name} has {len(tokens)} sorry token(s), not {index}",
            declaration=found.name,
            sorry=index,
            found=len(tokens),
        )
    return tokens[index - 1]


def sorry_tokens(text: DocumentText, found: Declaration) -> list[tuple[int, int]]:
    tokens = []
    sorry = re.compile(_SORRY)
    for number in range(found.first, found.stop):
        line = text.lines[number]
        code = line.split("--", 1)[0]
        tokens += [(number, utf16_len(line[: m.start()])) for m in sorry.finditer(code)]
    return tokens


def declarations(text: DocumentText) -> list[Declaration]:
    lines = text.lines
    scopes: list[str | None] = []
    starts: list[tuple[str, int]] = []
    namespace, declaration = re.compile(_NAMESPACE), re.compile(_DECLARATION)
    top_level = re.compile(_TOP_LEVEL)
    for number, line in enumerate(lines):
        scope = namespace.match(line)
        if scope is not None:
            _enter_or_leave(scopes, scope.group(1), scope.group(2))
            continue
        head = declaration.match(line)
        if head is not None:
            starts.append((_full_name(scopes, head.group(1)), number))
    found = []
    for name, first in starts:
        stop = first + 1
        while stop < len(lines) and not top_level.match(lines[stop]):
            stop += 1
        found.append(Declaration(name, first, stop))
    return found


def find_declaration(text: DocumentText, name: str) -> Declaration:
    every = declarations(text)
    exact = [d for d in every if d.name == name]
    suffix = [d for d in every if d.name.endswith("." + name)]
    chosen = exact or suffix
    if len(chosen) == 1 or exact:
        return chosen[0]
    if suffix:
        raise _no_match(
            f"{name} is ambiguous: {', '.join(d.name for d in suffix[:5])}",
            declaration=name,
            candidates=[d.name for d in suffix[:20]],
        )
    raise _no_match(
        f"no declaration {name} in this file",
        declaration=name,
        declarations=[d.name for d in every if d.name][:50],
    )


def _enter_or_leave(scopes: list[str | None], keyword: str, name: str) -> None:
    if keyword == "namespace":
        scopes.append(name or None)
    elif keyword == "section":
        scopes.append(None)
    elif scopes:
        scopes.pop()


def _full_name(scopes: list[str | None], name: str) -> str:
    if name.startswith("_root_."):
        return name[len("_root_.") :]
    return ".".join([*(s for s in scopes if s), name])


def _no_match(message: str, **data: Any) -> BrokerError:
    return BrokerError("invalidParams", message, {"reason": "noMatch", **data})
