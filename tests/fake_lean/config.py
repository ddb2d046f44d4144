"""Switches of the fake (environment variables and ``-D`` options) and the profile texts."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").lower() in ("1", "true", "yes", "on")


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value) if value else None


@dataclass(frozen=True)
class Texts:
    """Message texts that changed between Lean releases."""

    legacy: bool

    def sorry(self) -> str:
        return "declaration uses 'sorry'" if self.legacy else "declaration uses `sorry`"

    def unknown_ident(self, name: str) -> str:
        return f"unknown identifier '{name}'" if self.legacy else f"Unknown identifier `{name}`"

    def no_goals(self) -> str:
        return "no goals to be solved" if self.legacy else "No goals to be solved"

    def type_mismatch(self, term: str, actual: str, expected: str) -> str:
        head = "type mismatch" if self.legacy else "Type mismatch"
        return f"{head}\n  {term}\nhas type\n  {actual}\nbut is expected to have type\n  {expected}"

    def try_this(self, suggestion: str) -> str:
        if self.legacy:
            return f"Try this: {suggestion}"
        return f"Try this:\n  [apply] {suggestion}"

    def rewrite_failed(self, pattern: str) -> str:
        head = "tactic 'rewrite' failed" if self.legacy else "Tactic `rewrite` failed"
        return f"{head}, did not find instance of the pattern in the target expression\n  {pattern}"


@dataclass(frozen=True)
class Settings:
    """Everything configurable about one fake server process."""

    profile: str = "v4.3x"
    report_delay_ms: float = 200.0
    cmd_delay_ms: float = 1.0
    sleep_scale: float = 1.0
    definition_form: str = "auto"  # auto | link | location
    edit_mode: str = "newest"  # newest | legacy
    stubborn_workers: bool = False
    spawn_workers: bool = True
    stale_imports: bool = False
    stderr_flood_lines: int = 0
    init_delay_ms: float = 0.0
    setup_delay_ms: float = 0.0
    under_lake: bool = False
    lake_invalid_config: str | None = None
    request_log: Path | None = None
    rpc: bool = True
    rpc_expiry_ms: float = 30000.0
    fatal_publish_delay_ms: float = 0.0
    stale_notice: bool = False  # every worker with local imports calls them out of date
    restart_drops: bool = False  # an older watchdog: a header restart drops pending requests
    lose_waits: bool = False  # every waitForDiagnostics is dropped unanswered
    sysroot: Path = field(default=HERE / "toolchain")
    lean_version: str = "4.33.0"

    @property
    def legacy(self) -> bool:
        return self.profile.startswith("v4.2")

    @property
    def texts(self) -> Texts:
        return Texts(self.legacy)


def load_settings(argv: list[str]) -> Settings:
    """Read the ``FAKE_LEAN_*`` environment plus ``-Dserver.reportDelayMs=N`` from argv."""
    profile = os.environ.get("FAKE_LEAN_PROFILE", "v4.3x")
    report_delay = _env_float("FAKE_LEAN_REPORT_DELAY_MS", 200.0)
    for arg in argv:
        if arg.startswith("-Dserver.reportDelayMs="):
            report_delay = float(arg.split("=", 1)[1])
    legacy = profile.startswith("v4.2")
    return Settings(
        profile=profile,
        report_delay_ms=report_delay,
        cmd_delay_ms=_env_float("FAKE_LEAN_CMD_DELAY_MS", 1.0),
        sleep_scale=_env_float("FAKE_LEAN_SLEEP_SCALE", 1.0),
        definition_form=os.environ.get("FAKE_LEAN_DEFINITION_FORM", "auto"),
        edit_mode=os.environ.get("FAKE_LEAN_EDIT_MODE", "legacy" if legacy else "newest"),
        stubborn_workers=_env_flag("FAKE_LEAN_STUBBORN_WORKERS"),
        spawn_workers=os.environ.get("FAKE_LEAN_SPAWN_WORKERS", "1") != "0",
        stale_imports=_env_flag("FAKE_LEAN_STALE_IMPORTS"),
        stderr_flood_lines=int(_env_float("FAKE_LEAN_STDERR_FLOOD", 0)),
        init_delay_ms=_env_float("FAKE_LEAN_INIT_DELAY_MS", 0.0),
        setup_delay_ms=_env_float("FAKE_LEAN_SETUP_DELAY_MS", 0.0),
        under_lake=_env_flag("FAKE_LEAN_UNDER_LAKE"),
        lake_invalid_config=os.environ.get("LAKE_INVALID_CONFIG"),
        request_log=_env_path("FAKE_LEAN_REQUEST_LOG"),
        rpc=os.environ.get("FAKE_LEAN_RPC", "1") != "0",
        rpc_expiry_ms=_env_float("FAKE_LEAN_RPC_EXPIRY_MS", 30000.0),
        restart_drops=_env_flag("FAKE_LEAN_RESTART_DROPS"),
        lose_waits=_env_flag("FAKE_LEAN_LOSE_WAITS"),
        fatal_publish_delay_ms=_env_float("FAKE_LEAN_FATAL_PUBLISH_DELAY_MS", 0.0),
        stale_notice=_env_flag("FAKE_LEAN_STALE_NOTICE"),
        sysroot=Path(os.environ.get("FAKE_LEAN_SYSROOT", str(HERE / "toolchain"))),
        lean_version=os.environ.get("FAKE_LEAN_VERSION", "4.28.0" if legacy else "4.33.0"),
    )
