"""Checking a JSON value against a TypedDict of `beam_runtime.broker.results`, key by key.

A TypedDict is closed here: a key it does not declare is a mismatch, a required key must be
present, and every value is checked against its declared type (lists, dicts, unions, literals,
nested TypedDicts). `Any` accepts anything. Returns the list of problems, empty when it fits.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union

from typing_extensions import is_typeddict


def problems(value: Any, tp: Any, where: str = "$") -> list[str]:
    if tp is Any:
        return []
    if is_typeddict(tp):
        return _typeddict(value, tp, where)
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        options = [problems(value, option, where) for option in typing.get_args(tp)]
        return [] if any(not found for found in options) else min(options, key=len)
    if origin is Literal:
        return [] if value in typing.get_args(tp) else [f"{where}: {value!r} not in {tp}"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        (item,) = typing.get_args(tp)
        return [p for i, v in enumerate(value) for p in problems(v, item, f"{where}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        _key, item = typing.get_args(tp)
        return [p for k, v in value.items() for p in problems(v, item, f"{where}.{k}")]
    if tp is type(None):
        return [] if value is None else [f"{where}: expected null, got {value!r}"]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{where}: expected a boolean"]
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{where}: expected an integer, got {value!r}"]
    if tp in (str, float):
        return [] if isinstance(value, tp) else [f"{where}: expected {tp.__name__}"]
    raise TypeError(f"{where}: no rule for {tp!r}")


def _typeddict(value: Any, tp: Any, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: expected a {tp.__name__} object, got {type(value).__name__}"]
    hints = typing.get_type_hints(tp)
    found = [
        f"{where}: undeclared key {key!r} in {tp.__name__}" for key in value if key not in hints
    ]
    found += [
        f"{where}: {tp.__name__} misses {key!r}" for key in tp.__required_keys__ if key not in value
    ]
    for key, sub in hints.items():
        if key in value:
            found += problems(value[key], _strip(sub), f"{where}.{key}")
    return found


def _strip(tp: Any) -> Any:
    """`NotRequired[X]`/`Required[X]` to `X` (get_type_hints keeps them on some versions)."""
    while typing.get_origin(tp) is not None and getattr(typing.get_origin(tp), "_name", "") in (
        "NotRequired",
        "Required",
    ):
        tp = typing.get_args(tp)[0]
    return tp
