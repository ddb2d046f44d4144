"""The official TypeScript SDK client (npm @modelcontextprotocol/sdk, legacy family).

Installs the SDK with npm into a cache directory on first use. Without Node this test skips
locally and fails in CI (CI=true), where Node is required.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from beam_mcp.tools.catalog import NAMES
from tests.mcp.helpers import REPO, SLEEP_BACKEND, minimal_env

SDK = "@modelcontextprotocol/sdk@1.32.2"
HERE = Path(__file__).resolve().parent


def need(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{tool} is required in CI for the TypeScript SDK test")
        pytest.skip(f"{tool} is not installed")
    return found


@pytest.fixture(scope="module")
def sdk_dir() -> Path:
    need("node")
    npm = need("npm")
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lean-beam-tests"
    target = cache / ("ts-sdk-" + SDK.rsplit("@", 1)[1])
    if not (target / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        (target / "package.json").write_text('{"private": true, "type": "module"}\n')
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--silent", SDK],
            cwd=target,
            check=True,
            timeout=300,
        )
    shutil.copy(HERE / "ts_client.mjs", target / "ts_client.mjs")
    return target


def test_typescript_sdk_legacy_client(sdk_dir: Path, project: Path) -> None:
    node = need("node")
    executable = str(Path(sys.executable).with_name("lean-beam-mcp"))
    env = minimal_env(BEAM_NO_DELEGATE="1", **SLEEP_BACKEND)
    env["PATH"] = os.path.dirname(node) + os.pathsep + env.get("PATH", "")
    run = subprocess.run(
        [node, str(sdk_dir / "ts_client.mjs"), executable, str(project)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(REPO),
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["server"]["name"] == "lean-beam-mcp"
    assert len(summary["tools"]) == len(NAMES) and summary["tools"][0] == "beam_version"
    assert summary["version"]["mcp_protocol"] == "2026-07-28"
    assert summary["syncError"] is False
    assert summary["progress"] == [1, 2, 3]
    assert summary["badCode"] == "invalidInput"
    assert summary["stderr"] == ""
