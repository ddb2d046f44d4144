"""Handles of speculative execution: broker-side records behind opaque ids.

A handle remembers what a successful probe ran: the workspace, the session epoch, the source path
and version, the position, the probe kind and the accumulated probe text. Clients only ever see
``{"id": <43 base64url characters>}``. A handle that stops being usable is not forgotten at once:
it leaves a tombstone with the reason, so the caller learns *why* (released, consumed, the source
changed, the session restarted, the workspace was dropped). Tombstones are capped.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from beam_runtime.broker.errors import BrokerError

TOMBSTONE_LIMIT = 4096


@dataclass(frozen=True)
class HandleRecord:
    id: str
    root: str
    epoch: int
    abs_path: str
    display: str
    version: int
    line: int
    character: int
    column: int  # continuation lines of later text start at this column
    kind: str  # "tactic" | "command"
    text: str  # everything run after the position so far, already laid out
    owner: str = ""  # the connection that made it on a shared host; "" in-process

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id}


@dataclass(frozen=True)
class Tombstone:
    root: str
    reason: str
    owner: str = ""


def new_id() -> str:
    """32 random bytes, base64url without padding: 43 characters."""
    return secrets.token_urlsafe(32)


def stale(reason: str, handle_id: str, message: str) -> BrokerError:
    return BrokerError("contentModified", message, {"reason": reason, "handle": {"id": handle_id}})


class HandleStore:
    """All handles of the server process; the backend owns exactly one."""

    def __init__(self) -> None:
        self.live: dict[str, HandleRecord] = {}
        self.dead: OrderedDict[str, Tombstone] = OrderedDict()

    def add(self, record: HandleRecord) -> None:
        self.live[record.id] = record

    def count(self, root: str, epoch: int | None = None) -> int:
        return sum(
            1
            for record in self.live.values()
            if record.root == root and (epoch is None or record.epoch == epoch)
        )

    def lookup(self, handle_id: str, root: str, abs_path: str, owner: str = "") -> HandleRecord:
        """The live record, or the tool error the caller deserves.

        On a shared host a handle belongs to the connection that made it: another agent's
        handle is ``handleNotFound``, whether it is alive or not.
        """
        record = self.live.get(handle_id)
        if record is None:
            tomb = self.dead.get(handle_id)
            if tomb is None:
                raise stale("unknownHandle", handle_id, "this handle is not known to the server")
            if tomb.owner != owner:
                raise _not_yours(handle_id)
            if tomb.root != root:
                raise _foreign(handle_id)
            raise stale(tomb.reason, handle_id, _DEAD_MESSAGES[tomb.reason])
        if record.owner != owner:
            raise _not_yours(handle_id)
        if record.root != root:
            raise _foreign(handle_id)
        if record.abs_path != abs_path:
            raise BrokerError(
                "invalidParams",
                f"this handle belongs to {record.display}, not to the path given",
                {"reason": "handlePathMismatch", "handle_path": record.display},
            )
        return record

    def retire(self, handle_id: str, reason: str) -> None:
        record = self.live.pop(handle_id, None)
        if record is not None:
            self._bury(handle_id, Tombstone(record.root, reason, record.owner))

    def invalidate(
        self,
        reason: str,
        root: str,
        *,
        epoch: int | None = None,
        abs_path: str | None = None,
        below_version: int | None = None,
        owner: str | None = None,
    ) -> int:
        """Retire every live handle matching the filters; returns how many."""
        doomed = [
            record.id
            for record in self.live.values()
            if record.root == root
            and (epoch is None or record.epoch == epoch)
            and (abs_path is None or record.abs_path == abs_path)
            and (below_version is None or record.version < below_version)
            and (owner is None or record.owner == owner)
        ]
        for handle_id in doomed:
            self.retire(handle_id, reason)
        return len(doomed)

    def _bury(self, handle_id: str, tomb: Tombstone) -> None:
        self.dead[handle_id] = tomb
        while len(self.dead) > TOMBSTONE_LIMIT:
            self.dead.popitem(last=False)


def _foreign(handle_id: str) -> BrokerError:
    return BrokerError(
        "invalidParams",
        "this handle belongs to another workspace",
        {"reason": "handleWorkspaceMismatch", "handle": {"id": handle_id}},
    )


def _not_yours(handle_id: str) -> BrokerError:
    return BrokerError(
        "handleNotFound",
        "this handle belongs to another agent sharing this workspace's Lean host",
        {"reason": "otherAgent", "handle": {"id": handle_id}},
    )


_DEAD_MESSAGES = {
    "released": "this handle was released",
    "consumed": "this handle was consumed by lean_run_with_linear",
    "sourceChanged": "the source document changed (or was closed) since this handle was made",
    "sessionRestarted": "the Lean session restarted since this handle was made",
    "workspaceDropped": "the workspace was dropped since this handle was made",
    "connectionClosed": "the connection that made this handle closed",
}
