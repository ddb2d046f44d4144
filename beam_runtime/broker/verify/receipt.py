"""``lean_verify`` receipts: what a verification saw, authenticated, and whether that still holds.

A receipt is self-contained JSON: the root, the files asked about, the declarations named, the
hash of the lakefile, ``lean-toolchain``, ``lake-manifest.json``, the statement lock and the
policy file (``absent`` when missing), the source hash of every module the answer depends on
(the files' modules, every workspace module importing them, and every workspace module any of
those imports, directly or not), and the outcome (``ok``, modules, declarations, flagged,
statements, policy, reason). ``mac`` is an HMAC-SHA256 of all of that under the user's receipt
key (``secret.py``), so a receipt edited or written by hand, or made under another user's key,
does not check.

A receipt holds when its schema and MAC check and the root, files asked about, declarations,
those files and every source hash are equal now. Anything else is answered by verifying
again: ``receipt_mismatch`` names what differs (``schema``, ``signature``, ``root``,
``targets``, ``requested`` or a file's name) and ``stale`` the modules whose hash changed,
appeared or went away.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from dataclasses import dataclass, field
from typing import Any

from beam_runtime import safe_read
from beam_runtime.broker.verify.cone import Graph
from beam_runtime.broker.verify.lock import LOCK_FILE
from beam_runtime.broker.verify.policy import POLICY_FILE
from beam_runtime.broker.verify.save import LAKEFILES, source_hash

SCHEMA = "lean-beam.verify-receipt/2"
OUTCOME = ("ok", "modules", "declarations", "flagged", "statements", "policy")
COVERED_FILES = (*LAKEFILES, "lean-toolchain", "lake-manifest.json", LOCK_FILE, POLICY_FILE)


@dataclass(frozen=True)
class Subject:
    """What a verification is about, and the state of what it depends on now."""

    root: str
    targets: list[str]  # display paths, sorted
    declarations: list[str] | None
    toolchain: str
    manifest_hash: str
    files: dict[str, str]  # each of COVERED_FILES -> its hash, "absent" or "unreadable"
    sources: dict[str, str]  # module -> source hash, closure and cone as they are now


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


def file_hashes(root: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for name in COVERED_FILES:
        try:
            found[name] = source_hash(safe_read.read_regular(os.path.join(root, name), CAP))
        except FileNotFoundError:
            found[name] = "absent"
        except OSError:
            found[name] = "unreadable"
    return found


def make(subject: Subject, outcome: dict[str, Any], key: bytes) -> dict[str, Any]:
    body: dict[str, Any] = {
        "schema": SCHEMA,
        "root": subject.root,
        "targets": subject.targets,
        "requested": subject.declarations,
        "files": subject.files,
        "sources": subject.sources,
        **{k: outcome[k] for k in (*OUTCOME, "reason") if k in outcome},
    }
    return {**body, "mac": _mac(body, key)}


def _mac(body: dict[str, Any], key: bytes) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hmac.new(key, canonical.encode("utf-8"), hashlib.sha256).hexdigest()


def check(receipt: dict[str, Any], subject: Subject, key: bytes) -> Check:
    if receipt.get("schema") != SCHEMA:
        return Check(False, mismatch=["schema"])
    body = {k: v for k, v in receipt.items() if k != "mac"}
    given = receipt.get("mac")
    if not isinstance(given, str) or not hmac.compare_digest(given, _mac(body, key)):
        return Check(False, mismatch=["signature"])
    mismatch = [
        name
        for name, now in (
            ("root", subject.root),
            ("targets", subject.targets),
            ("requested", subject.declarations),
        )
        if receipt.get(name) != now
    ]
    files: dict[str, str] = receipt.get("files") or {}
    mismatch += [name for name in COVERED_FILES if files.get(name) != subject.files.get(name)]
    before: dict[str, str] = receipt.get("sources") or {}
    stale = sorted(
        module
        for module in before.keys() | subject.sources.keys()
        if before.get(module) != subject.sources.get(module)
    )
    return Check(not mismatch and not stale, stale, mismatch)


def outcome_of(receipt: dict[str, Any]) -> dict[str, Any]:
    return {k: receipt[k] for k in (*OUTCOME, "reason") if k in receipt}
