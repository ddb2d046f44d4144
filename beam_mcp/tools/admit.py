"""Admitting tool arguments without pydantic: the schema check and the input handlers read.

Arguments that pass the tool's input schema in `beam_mcp/schema.json` (checked by
`beam_runtime.schema_check`) become an `Arguments`: the fields of the tool's pydantic model, in
model order, with the model's defaults and nested models as nested `Arguments`, all from the
generated `beam_mcp/fields.json`. Handlers read it exactly as they read the model. Arguments the
schema rejects are left to the pydantic model, which stays the model of record and words every
error; it may still accept them (the schema admits no `null` for an optional field, the model
does).
"""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any

from beam_runtime.schema_check import schema_problem

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA_FILE = os.path.join(_HERE, "schema.json")
FIELDS_FILE = os.path.join(_HERE, "fields.json")


class Arguments:
    """A tool input that passed its schema: read-only fields as attributes, like its model."""

    __slots__ = ("__dict__", "_given")
    _given: frozenset[str]

    def __init__(self, fields: dict[str, Any], given: frozenset[str]) -> None:
        object.__setattr__(self, "_given", given)
        self.__dict__.update(fields)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"tool arguments are read-only: {name}")

    @property
    def model_fields_set(self) -> set[str]:
        """The fields the call gave (the others hold their defaults), as pydantic names them."""
        return set(self._given)

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Arguments:
        changes = update or {}
        return Arguments({**self.__dict__, **changes}, self._given | frozenset(changes))

    def __eq__(self, other: object) -> bool:
        return type(other) is Arguments and other.__dict__ == self.__dict__

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inside = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"Arguments({inside})"


@cache
def _tables() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    with open(SCHEMA_FILE, "rb") as handle:
        schemas = {tool["name"]: tool["inputSchema"] for tool in json.load(handle)["tools"]}
    with open(FIELDS_FILE, "rb") as handle:
        fields: dict[str, dict[str, Any]] = json.load(handle)
    return schemas, fields


def admit(tool: str, arguments: dict[str, Any]) -> Arguments | None:
    """`arguments` as the tool's input when its schema accepts them, else None (ask pydantic)."""
    schemas, fields = _tables()
    if schema_problem(schemas[tool], arguments) is not None:
        return None
    return build(fields[tool], arguments)


def build(fields: dict[str, Any], value: dict[str, Any]) -> Arguments:
    """The input object of `value` (already checked): given fields, then defaults."""
    out: dict[str, Any] = {}
    for name, entry in fields.items():
        if name in value:
            out[name] = _convert(entry, value[name])
        else:
            default = entry["default"]
            out[name] = [] if type(default) is list else default  # a fresh list each time
    return Arguments(out, frozenset(value))


def _convert(entry: dict[str, Any], item: Any) -> Any:
    if "model" in entry:
        return build(entry["model"], item)
    if "items" in entry:
        return [build(entry["items"], element) for element in item]
    if type(item) is list:
        return list(item)  # pydantic copies containers too
    if type(item) is dict:
        return dict(item)
    return item
