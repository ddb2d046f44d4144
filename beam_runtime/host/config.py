"""What a host is started with: its workspace, where it listens, its broker's configuration.

The ``lean-beam-mcp`` that starts a host passes this as JSON on the host's command line; later
agents of the same runtime that attach get the broker the first one configured (docs/HOST.md).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from beam_runtime.broker.config import BrokerConfig, Limits, ManagerConfig, PoolConfig
from beam_runtime.host.place import Place

DEFAULT_IDLE_S = 600.0


class HostConfig(NamedTuple):
    root: str
    toolchain: str
    runtime_id: str
    place: Place
    broker: BrokerConfig
    idle_s: float = DEFAULT_IDLE_S  # exit this long after the last agent left; close idle workers

    def to_json(self) -> str:
        broker = self.broker
        manager = {**broker.manager._asdict(), "limits": broker.manager.limits._asdict()}
        body = {
            "root": self.root,
            "toolchain": self.toolchain,
            "runtime_id": self.runtime_id,
            "place": self.place._asdict(),
            "idle_s": self.idle_s,
            "broker": {
                "manager": manager,
                "scratch": broker.scratch._asdict(),
                "result_bytes": broker.result_bytes,
                "budget_bytes": broker.budget_bytes,
            },
        }
        return json.dumps(body)

    @classmethod
    def from_json(cls, text: str) -> HostConfig:
        body: dict[str, Any] = json.loads(text)
        broker = body["broker"]
        manager = dict(broker["manager"])
        manager["limits"] = Limits(**manager["limits"])
        if manager.get("lean_cmd") is not None:
            manager["lean_cmd"] = tuple(manager["lean_cmd"])
        config = BrokerConfig(
            ManagerConfig(**manager),
            PoolConfig(**broker["scratch"]),
            result_bytes=broker["result_bytes"],
            budget_bytes=broker["budget_bytes"],
        )
        return cls(
            body["root"],
            body["toolchain"],
            body["runtime_id"],
            Place(**body["place"]),
            config,
            float(body["idle_s"]),
        )
