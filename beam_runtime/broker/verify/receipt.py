"""``lean_verify`` receipts: what a verification saw, and whether that still holds.

A receipt is self-contained JSON: the root, the files asked about, the declarations named, the
toolchain line, the ``lake-manifest.json`` hash, the source hash of every module of the cone,
and the outcome (``ok``, modules, declarations, flagged). A digest over all of that catches a
receipt that was edited. It still holds when the root, targets, declarations, toolchain and
manifest are the same, the cone has the same modules and every source hash is equal.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from beam_runtime import safe_read
from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.verify.cone import Graph
from beam_runtime.broker.verify.save import source_hash

SCHEMA = "lean-beam.verify-receipt/1"
OUTCOME = ("ok", "modules", "declarations", "flagged")


@dataclass(frozen=True)
class Subject:
    """What a verification is about, and the state of the sources it depends on now."""

    root: str
    targets: list[str]  # display paths, sorted
    declarations: list[str] | None
    toolchain: str
    manifest_hash: str
    sources: dict[str, str]  # module -> source hash, for the cone as it is now


@dataclass
class Check:
    valid: bool
    stale: list[str] = field(default_factory=list)
    mismatch: list[str] = field(default_factory=list)  # which non-source parts differ


CAP = safe_read.SOURCE_CAP


def hashes(graph: Graph, modules: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for module in modules:
        try:
            found[module] = source_hash(safe_read.read_regular(graph.paths[module], CAP))
        except OSError:
            found[module] = "missing"
    return found


def make(subject: Subject, outcome: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "schema": SCHEMA,
        "root": subject.root,
        "targets": subject.targets,
        "requested": subject.declarations,
        "toolchain": subject.toolchain,
        "manifest_hash": subject.manifest_hash,
        "sources": subject.sources,
        **{key: outcome[key] for key in OUTCOME},
    }
    return {**body, "digest": _digest(body)}


def _digest(body: dict[str, Any]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def parse(receipt: dict[str, Any]) -> dict[str, Any]:
    body = {key: value for key, value in receipt.items() if key != "digest"}
    if receipt.get("schema") != SCHEMA or not isinstance(receipt.get("sources"), dict):
        raise _bad("it is not a lean_verify receipt of this version")
    if receipt.get("digest") != _digest(body):
        raise _bad("its digest does not match its content (it was edited)")
    return receipt


def _bad(problem: str) -> BrokerError:
    return BrokerError(
        "invalidInput",
        f"the receipt cannot be checked: {problem}",
        {
            "reason": "badReceipt",
            "fix": "pass the receipt exactly as lean_verify returned it, or omit receipt",
        },
    )


def check(receipt: dict[str, Any], subject: Subject) -> Check:
    mismatch = [
        name
        for name, now in (
            ("root", subject.root),
            ("targets", subject.targets),
            ("requested", subject.declarations),
            ("toolchain", subject.toolchain),
            ("manifest_hash", subject.manifest_hash),
        )
        if receipt.get(name) != now
    ]
    before: dict[str, str] = receipt["sources"]
    stale = sorted(
        module
        for module in before.keys() | subject.sources.keys()
        if before.get(module) != subject.sources.get(module)
    )
    return Check(not mismatch and not stale, stale, mismatch)


def outcome_of(receipt: dict[str, Any]) -> dict[str, Any]:
    return {key: receipt[key] for key in OUTCOME}
