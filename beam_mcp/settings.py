"""Server settings: one frozen dataclass, filled from flags, then `LEAN_BEAM_MCP_*`, then defaults.

MCP clients start servers with almost no environment, so every setting has both a flag and an
environment variable (docs/MCP.md, "Command line"). `beam_mcp.lean` turns this object into the
broker's own configuration; nothing below the MCP layer sees it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ENV_PREFIX = "LEAN_BEAM_MCP_"
# A backend other than the broker (`PATH.py:factory` or `module:factory`), e.g. the tests' fault
# injection; read only when set, so it costs nothing otherwise.
BACKEND_ENV = "LEAN_BEAM_MCP_BACKEND"
SELF_CHECK_TIMEOUT_ENV = "LEAN_BEAM_MCP_SELF_CHECK_TIMEOUT_MS"
# The shared Lean host (docs/HOST.md): these variables are read by the host's commands too,
# hence no LEAN_BEAM_MCP_ prefix.
HOST_ENV = "LEAN_BEAM_HOST"
HOST_IDLE_ENV = "LEAN_BEAM_HOST_IDLE_S"
MEMORY_BUDGET_ENV = "LEAN_BEAM_MEMORY_BUDGET"
WORKER_MEMORY_ENV = "LEAN_BEAM_WORKER_MEMORY_MAX"
HOST_MODES = ("auto", "off", "required")
DEFAULT_HOST_IDLE_S = 600


@dataclass(frozen=True)
class Knob:
    """A numeric setting: attribute name, default, help text."""

    name: str
    default: int
    help: str
    minimum: int = 0

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()


KNOBS: tuple[Knob, ...] = (
    Knob("status_delay_ms", 2000, "delay before the single beam.status notice of a slow call"),
    Knob("session_start_timeout_ms", 600_000, "limit for starting a workspace's Lean session", 1),
    Knob("barrier_timeout_ms", 600_000, "limit for a sync barrier (waiting for diagnostics)", 1),
    Knob("navigation_timeout_ms", 60_000, "limit for hover, goals, symbols and similar", 1),
    Knob(
        "idle_timeout_ms",
        600_000,
        "close a workspace's Lean session after this idle time (0: never)",
    ),
    Knob(
        "max_workspaces",
        8,
        "Lean workspaces kept at once (least recently used idle one closes first)",
        1,
    ),
    Knob("scratch_per_document", 1, "scratch documents per source document for speculation", 1),
    Knob(
        "scratch_per_process",
        2,
        "scratch documents for the whole process; each one is a "
        "Lean worker process that loads the imports again (gigabytes with Mathlib)",
        1,
    ),
    Knob("scratch_idle_ms", 300_000, "close idle scratch documents after this time"),
    Knob(
        "rpc_keepalive_ms",
        10_000,
        "period of Lean RPC keep-alives for open documents (Lean "
        "drops a session 30 s after the last one)",
        100,
    ),
    Knob(
        "barrier_reissue_ms",
        2_000,
        "re-send a sync barrier Lean has not answered this long "
        "after the document's progress ended (older Lean drops it on a worker restart)",
        50,
    ),
    Knob(
        "result_bytes",
        20_000,
        "byte budget of one tool result's text; longer results are cut and say what was cut",
        512,
    ),
    Knob(
        "wait_ms",
        45_000,
        "default wait_ms of Lean tools: how long a call waits for Lean "
        "before it answers with what it has",
    ),
    Knob("max_calls_in_flight", 64, "tool calls run at once; later lines wait to be read", 1),
    Knob(
        "input_in_flight_kb",
        65536,
        "request bytes (KiB) of the tool calls running at once; past it later lines wait "
        "to be read",
        1024,
    ),
    Knob(
        "output_buffer_kb",
        4096,
        "unwritten output (KiB) past which stdin is not read until the client reads",
        64,
    ),
)


@dataclass(frozen=True)
class Settings:
    beam_cli: str | None = None
    lean_cmd: tuple[str, ...] | None = None
    lean_plugin: str | None = None
    log_file: str | None = None
    status_delay_ms: int = 2000
    session_start_timeout_ms: int = 600_000
    barrier_timeout_ms: int = 600_000
    navigation_timeout_ms: int = 60_000
    idle_timeout_ms: int = 600_000
    max_workspaces: int = 8
    scratch_per_document: int = 1
    scratch_per_process: int = 2
    scratch_idle_ms: int = 300_000
    rpc_keepalive_ms: int = 10_000
    barrier_reissue_ms: int = 2_000
    result_bytes: int = 20_000
    wait_ms: int = 45_000
    max_calls_in_flight: int = 64
    input_in_flight_kb: int = 65536
    output_buffer_kb: int = 4096
    host: str = "auto"  # auto | off | required
    host_idle_s: int = DEFAULT_HOST_IDLE_S
    memory_budget: int | None = None  # bytes; None: 60 % of physical memory
    worker_memory_max: int | None = None  # bytes of address space for Lean's tree; None: no cap
    backend: str | None = field(default=None, repr=False)

    def child_args(self) -> list[str]:
        """Flags that reproduce these settings in another server process (self-check)."""
        args: list[str] = []
        if self.beam_cli is not None:
            args += ["--beam-cli", self.beam_cli]
        if self.lean_cmd is not None:
            args += ["--lean-cmd", shlex.join(self.lean_cmd)]
        if self.lean_plugin is not None:
            args += ["--lean-plugin", self.lean_plugin]
        if self.log_file is not None:
            args += ["--log-file", self.log_file]
        if self.backend is not None:
            args += ["--backend", self.backend]
        if self.host != "auto":
            args += ["--host", self.host]
        if self.host_idle_s != DEFAULT_HOST_IDLE_S:
            args += ["--host-idle-s", str(self.host_idle_s)]
        if self.memory_budget is not None:
            args += ["--memory-budget", str(self.memory_budget)]
        if self.worker_memory_max is not None:
            args += ["--worker-memory-max", str(self.worker_memory_max)]
        defaults = Settings()
        for knob in KNOBS:
            value = getattr(self, knob.name)
            if value != getattr(defaults, knob.name):
                args += [knob.flag, str(value)]
        return args


class SettingsError(ValueError):
    """A flag or environment value that cannot be used; the command line exits 2."""


def parse_int(text: str, source: str, minimum: int) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise SettingsError(f"{source}: expected an integer, got {text!r}") from None
    if value < minimum:
        raise SettingsError(f"{source}: must be at least {minimum}, got {value}")
    return value


def build_settings(flags: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    """Combines parsed flags (None when absent) with the environment."""
    values: dict[str, Any] = {}
    for name in ("beam_cli", "lean_plugin", "log_file"):
        raw = flags.get(name)
        if raw is None:
            raw = env.get(ENV_PREFIX + name.upper()) or None
        values[name] = os.path.abspath(os.path.expanduser(raw)) if raw else None
    cmd = flags.get("lean_cmd")
    if cmd is None:
        cmd = env.get(ENV_PREFIX + "LEAN_CMD") or None
    if cmd is not None:
        argv = tuple(shlex.split(cmd))
        if not argv:
            raise SettingsError("--lean-cmd: the command is empty")
        values["lean_cmd"] = argv
    for knob in KNOBS:
        raw_flag = flags.get(knob.name)
        if raw_flag is not None:
            values[knob.name] = parse_int(str(raw_flag), knob.flag, knob.minimum)
        elif env.get(knob.env):
            values[knob.name] = parse_int(env[knob.env], knob.env, knob.minimum)
    values["backend"] = flags.get("backend") or env.get(BACKEND_ENV) or None
    values.update(_host_settings(flags, env))
    return Settings(**values)


def _host_settings(flags: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    mode = flags.get("host") or env.get(HOST_ENV) or None
    if mode is not None:
        if mode not in HOST_MODES:
            source = "--host" if flags.get("host") else HOST_ENV
            raise SettingsError(f"{source}: expected auto, off or required, got {mode!r}")
        values["host"] = mode
    idle = flags.get("host_idle_s")
    if idle is not None:
        values["host_idle_s"] = parse_int(str(idle), "--host-idle-s", 1)
    elif env.get(HOST_IDLE_ENV):
        values["host_idle_s"] = parse_int(env[HOST_IDLE_ENV], HOST_IDLE_ENV, 1)
    for name, flag, variable in (
        ("memory_budget", "--memory-budget", MEMORY_BUDGET_ENV),
        ("worker_memory_max", "--worker-memory-max", WORKER_MEMORY_ENV),
    ):
        size, source = flags.get(name), flag
        if size is None:
            size, source = env.get(variable) or None, variable
        if size is not None:
            from beam_runtime.lsp.memory import parse_size

            try:
                values[name] = parse_size(str(size))
            except ValueError as error:
                raise SettingsError(f"{source}: {error}") from None
    return values
