"""The lean-beam-mcp command line: flags, settings, --version and --self-check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from beam_mcp.settings import KNOBS, build_settings
from beam_mcp.tools.catalog import NAMES
from tests.mcp.helpers import REPO, SLEEP_BACKEND, minimal_env


def run(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "beam_mcp", *args],
        capture_output=True,
        text=True,
        env=minimal_env(**env),
        cwd=str(cwd or REPO),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_version_text() -> None:
    done = run("--version")
    assert done.returncode == 0 and done.stderr == ""
    first, *rest = done.stdout.splitlines()
    assert first.startswith("lean-beam-mcp ")
    assert "mcp_protocol: 2026-07-28" in rest


def test_help_and_usage_errors() -> None:
    helped = run("--help")
    assert helped.returncode == 0 and "--lean-cmd" in helped.stdout
    assert "--status-delay-ms" in helped.stdout
    assert run("--no-such-flag").returncode == 2
    assert run("--status-delay-ms", "soon").returncode == 2
    bad_env = run(LEAN_BEAM_MCP_STATUS_DELAY_MS="-1")
    assert bad_env.returncode == 2 and "LEAN_BEAM_MCP_STATUS_DELAY_MS" in bad_env.stderr


def test_host_settings_flags_variables_and_usage_errors() -> None:
    env = {
        "LEAN_BEAM_HOST": "required",
        "LEAN_BEAM_HOST_IDLE_S": "30",
        "LEAN_BEAM_MEMORY_BUDGET": "2G",
        "LEAN_BEAM_WORKER_MEMORY_MAX": "512M",
    }
    got = build_settings({"host": "off", "memory_budget": "1536K"}, env)
    assert (got.host, got.host_idle_s) == ("off", 30)
    assert got.memory_budget == 1536 * 1024 and got.worker_memory_max == 512 << 20
    defaults = build_settings({}, {})
    assert (defaults.host, defaults.host_idle_s, defaults.memory_budget) == ("auto", 600, None)
    args = build_settings({}, env).child_args()
    assert args == [
        "--host",
        "required",
        "--host-idle-s",
        "30",
        "--memory-budget",
        str(2 << 30),
        "--worker-memory-max",
        str(512 << 20),
    ]
    assert run("--host", "sometimes").returncode == 2
    for name, value in (
        ("LEAN_BEAM_HOST", "maybe"),
        ("LEAN_BEAM_HOST_IDLE_S", "0"),
        ("LEAN_BEAM_MEMORY_BUDGET", "12T"),
        ("LEAN_BEAM_WORKER_MEMORY_MAX", "0"),
    ):
        bad = run(**{name: value})
        assert bad.returncode == 2 and name in bad.stderr, (name, bad.stderr)


def test_missing_plugin_is_a_clear_error(tmp_path: Path) -> None:
    done = run("--lean-plugin", str(tmp_path / "nope.so"))
    assert done.returncode == 1 and done.stdout == ""
    assert "--lean-plugin" in done.stderr and "fix:" in done.stderr


def test_settings_precedence_flag_env_default() -> None:
    env = {
        "LEAN_BEAM_MCP_MAX_WORKSPACES": "3",
        "LEAN_BEAM_MCP_LEAN_CMD": "lake serve --",
        "LEAN_BEAM_MCP_STATUS_DELAY_MS": "10",
    }
    got = build_settings({"status_delay_ms": "20"}, env)
    assert got.max_workspaces == 3 and got.status_delay_ms == 20
    assert got.lean_cmd == ("lake", "serve", "--")
    assert build_settings({}, {}).status_delay_ms == 2000
    assert {k.env for k in KNOBS} >= {
        "LEAN_BEAM_MCP_IDLE_TIMEOUT_MS",
        "LEAN_BEAM_MCP_SESSION_START_TIMEOUT_MS",
    }
    args = build_settings({"lean_cmd": "a 'b c'", "max_workspaces": "2"}, {}).child_args()
    assert args == ["--lean-cmd", "a 'b c'", "--max-workspaces", "2"]


def test_self_check_development_identity(project: Path) -> None:
    done = run("--self-check", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out = done.stdout
    assert "self-check passed" in out and "development identity" in out
    assert f"tools/list: ok ({len(NAMES)} tools)" in out and "EOF teardown: ok" in out


def test_self_check_with_file_reports_the_failing_phase(project: Path) -> None:
    done = run("--self-check", "Main.lean", cwd=project)
    assert done.returncode == 1
    assert "phase lean_sync" in done.stderr and "runtimeSetup" in done.stderr
    assert "fix:" in done.stderr
    assert "passed beam_version" in done.stdout


def test_self_check_with_file_passes_on_a_working_backend(project: Path) -> None:
    done = run("--self-check", "Main.lean", cwd=project, **SLEEP_BACKEND)
    assert done.returncode == 0, done.stderr
    assert "lean_sync: synced: 0 errors (version " in done.stdout


def test_self_check_missing_file_and_bad_timeout(project: Path) -> None:
    missing = run("--self-check", "Nope.lean", cwd=project)
    assert missing.returncode == 1 and "Nope.lean" in missing.stderr
    bad = run("--self-check", cwd=project, LEAN_BEAM_MCP_SELF_CHECK_TIMEOUT_MS="soon")
    assert bad.returncode == 2 and "LEAN_BEAM_MCP_SELF_CHECK_TIMEOUT_MS" in bad.stderr


def test_self_check_phase_timeout(project: Path) -> None:
    (project / "6000ms.lean").write_text("")
    done = run(
        "--self-check",
        "6000ms.lean",
        cwd=project,
        **SLEEP_BACKEND,
        LEAN_BEAM_MCP_SELF_CHECK_TIMEOUT_MS="3000",
    )
    assert done.returncode == 1
    assert "phase lean_sync" in done.stderr and "LEAN_BEAM_MCP_SELF_CHECK_TIMEOUT_MS" in done.stderr
