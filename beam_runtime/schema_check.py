"""Checking a JSON value against the subset of JSON Schema our generated schemas use, stdlib only.

The schemas of record are generated from pydantic models (the on-disk records in
`beam_runtime/records_schema.py`, the tool inputs in `beam_mcp/schema.json`); hot paths check
values here instead of importing pydantic. `schema_problem` supports exactly the keywords those
files use and raises `NotImplementedError` on any other, so a new keyword cannot pass unchecked;
tests check that it and pydantic agree.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import re

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "string": (str,),
    "integer": (int,),
    "array": (list,),
    "boolean": (bool,),
}
_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "const", "enum", "minimum",
    "maximum", "pattern", "maxLength", "items", "minItems", "maxItems",
    "default", "description", "title", "$schema",  # annotations: nothing to check
})  # fmt: skip


@lru_cache(maxsize=32)
def _pattern(pattern: str) -> re.Pattern[str]:
    import re

    # JSON Schema patterns are ECMA-262: a final `$` matches only at the very end (Python's `$`
    # would also match before a trailing newline).
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def schema_problem(schema: dict[str, Any], value: Any, where: str = "") -> str | None:
    """The first way `value` breaks `schema`, as ``"<dotted path>: <problem>"``, or None."""
    found = _problem(schema, value)
    if found is None:
        return None
    path, problem = found
    dotted = ".".join(filter(None, [where.rstrip("."), *reversed(path)]))
    return f"{dotted or 'value'}: {problem}"


def _problem(schema: dict[str, Any], value: Any) -> tuple[list[str], str] | None:
    """(path from the innermost key outwards, problem) or None; paths are built only on failure."""
    if not _KEYWORDS.issuperset(schema):
        unknown = sorted(set(schema) - _KEYWORDS)
        raise NotImplementedError(f"unsupported JSON Schema keywords: {unknown}")
    problem = _value_problem(schema, value)
    if problem is not None:
        return [], problem
    if type(value) is dict:
        return _object_problem(schema, value)
    if type(value) is list:
        return _array_problem(schema, value)
    return None


def _object_problem(schema: dict[str, Any], value: dict[str, Any]) -> tuple[list[str], str] | None:
    for name in schema.get("required", ()):
        if name not in value:
            return [name], "missing"
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        sub = properties.get(name, extra)
        if sub is False:
            return [name], "unexpected key"
        if sub is not True:
            found = _problem(sub, item)
            if found is not None:
                found[0].append(name)
                return found
    return None


def _array_problem(schema: dict[str, Any], value: list[Any]) -> tuple[list[str], str] | None:
    if "minItems" in schema and len(value) < schema["minItems"]:
        return [], f"must have at least {schema['minItems']} items"
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        return [], f"must have at most {schema['maxItems']} items"
    items = schema.get("items")
    if items is None:
        return None
    for index, item in enumerate(value):
        found = _problem(items, item)
        if found is not None:
            found[0].append(str(index))
            return found
    return None


def _type_ok(expected: str, value: Any) -> bool:
    if expected not in _TYPES:
        raise NotImplementedError(f"unsupported JSON Schema type: {expected!r}")
    if isinstance(value, bool) and expected != "boolean":
        return False
    return isinstance(value, _TYPES[expected])


def _value_problem(schema: dict[str, Any], value: Any) -> str | None:
    expected = schema.get("type")
    if expected is not None and not _type_ok(expected, value):
        return f"expected {expected}, got {type(value).__name__}"
    if "const" in schema and (type(value) is not type(schema["const"]) or value != schema["const"]):
        return f"must be {schema['const']!r}"
    if "enum" in schema and value not in schema["enum"]:
        return f"must be one of {', '.join(map(str, schema['enum']))}"
    if "minimum" in schema and value < schema["minimum"]:
        return f"must be at least {schema['minimum']}"
    if "maximum" in schema and value > schema["maximum"]:
        return f"must be at most {schema['maximum']}"
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        return f"must be at most {schema['maxLength']} characters long"
    if "pattern" in schema and not _pattern(schema["pattern"]).search(value):
        return f"does not match {schema['pattern']}"
    return None
