"""`beam-cli mcp-config` against fake `lake`/`elan` executables, run with an MCP client's env."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from beam_runtime.lsp.framing import encode_message, parse_header
from beam_runtime.toolchain import TOOLCHAIN_FLOOR
from tests.runtime.clienv import SHORT_PATH, client_env, dev_command, run
from tests.support.toolchain import FAKE_BIN, install_fake_elan

BEAM_CLI = dev_command("beam-cli")


def make_project(path: Path, toolchain: str | None = f"leanprover/lean4:{TOOLCHAIN_FLOOR}") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "lakefile.toml").write_text('name = "demo"\n')
    if toolchain is not None:
        (path / "lean-toolchain").write_text(toolchain + "\n")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


def mcp_config(home: Path, cwd: Path, *args: str, **env: str):  # type: ignore[no-untyped-def]
    path = env.pop("PATH", SHORT_PATH)
    return run([BEAM_CLI, *args], client_env(home, path, **env), cwd=cwd)


def test_finds_lake_in_elan_default_dir_with_short_path(home: Path, tmp_path: Path) -> None:
    elan_bin = install_fake_elan(home / ".elan")
    project = make_project(tmp_path / "proj")
    result = mcp_config(home, tmp_path, "--root", str(project), "mcp-config")
    assert result.code == 0, result.stderr
    config = result.json()
    assert config["schema"] == 1
    assert config["root"] == str(project.resolve())
    assert config["toolchain"] == f"leanprover/lean4:{TOOLCHAIN_FLOOR}"
    assert config["lean_cmd"] == [str(elan_bin / "lake"), "serve", "--"]
    assert config["lean_plugin"] is None
    assert config["env"]["PATH"].split(os.pathsep)[0] == str(elan_bin)
    assert config["env"]["PATH"].split(os.pathsep)[1:] == SHORT_PATH.split(os.pathsep)
    assert config["runtime"]["id"] is None  # the test venv is a development identity
    assert config["runtime"]["version"]
    assert config["warnings"] == []


def test_lean_cmd_runs_from_the_short_path(home: Path, tmp_path: Path) -> None:
    install_fake_elan(home / ".elan")
    project = make_project(tmp_path / "proj")
    config = mcp_config(home, project, "mcp-config").json()
    env = {**client_env(home), **config["env"]}
    # `lake serve` of the fake toolchain is a real language server: answer `initialize`.
    server = subprocess.Popen(config["lean_cmd"], env=env, cwd=config["root"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)  # fmt: skip
    try:
        assert server.stdin is not None and server.stdout is not None
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"processId": None, "rootUri": None, "capabilities": {}}}  # fmt: skip
        server.stdin.write(encode_message(request))
        server.stdin.flush()
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            byte = server.stdout.read(1)
            assert byte, server.stderr.read() if server.stderr else ""
            header += byte
        answer = json.loads(server.stdout.read(parse_header(header[:-4])))
    finally:
        server.kill()
        server.communicate(timeout=30)
    assert answer["id"] == 1 and "capabilities" in answer["result"]


def test_walks_up_from_a_subdirectory(home: Path, tmp_path: Path) -> None:
    install_fake_elan(home / ".elan")
    project = make_project(tmp_path / "proj")
    deep = project / "Demo" / "Sub"
    deep.mkdir(parents=True)
    result = mcp_config(home, deep, "mcp-config")
    assert result.code == 0, result.stderr
    assert result.json()["root"] == str(project.resolve())


def test_relative_and_symlinked_root_is_canonical(home: Path, tmp_path: Path) -> None:
    install_fake_elan(home / ".elan")
    project = make_project(tmp_path / "real" / "proj")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    result = mcp_config(home, tmp_path, "--root", "link/proj", "mcp-config")
    assert result.code == 0, result.stderr
    assert result.json()["root"] == str(project.resolve())


def test_lake_on_path_wins_and_is_absolute(home: Path, tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "lake").symlink_to(FAKE_BIN / "lake")
    install_fake_elan(home / ".elan")
    project = make_project(tmp_path / "proj")
    result = mcp_config(home, project, "mcp-config", PATH=f"{tools}:{SHORT_PATH}")
    assert result.code == 0, result.stderr
    config = result.json()
    # the link is kept as found (elan proxies dispatch on their own name), never resolved
    assert config["lean_cmd"][0] == str(tools / "lake")
    assert config["env"]["PATH"].split(os.pathsep)[0] == str(home / ".elan" / "bin")


def test_lake_without_elan_puts_its_own_dir_first(home: Path, tmp_path: Path) -> None:
    tools = tmp_path / "nix" / "bin"
    tools.mkdir(parents=True)
    (tools / "lake").symlink_to(FAKE_BIN / "lake")
    project = make_project(tmp_path / "proj")
    config = mcp_config(home, project, "mcp-config", PATH=f"{SHORT_PATH}:{tools}").json()
    assert config["lean_cmd"][0] == str(tools / "lake")
    assert config["env"]["PATH"] == f"{tools}:{SHORT_PATH}"


def test_elan_home_is_searched(home: Path, tmp_path: Path) -> None:
    elan_bin = install_fake_elan(tmp_path / "elan-home")
    project = make_project(tmp_path / "proj")
    result = mcp_config(home, project, "mcp-config", ELAN_HOME=str(tmp_path / "elan-home"))
    assert result.code == 0, result.stderr
    assert result.json()["lean_cmd"][0] == str(elan_bin / "lake")


def test_lean_plugin_is_appended(home: Path, tmp_path: Path) -> None:
    install_fake_elan(home / ".elan")
    project = make_project(tmp_path / "proj")
    plugin = tmp_path / "libplugin.so"
    plugin.write_bytes(b"\0")
    config = mcp_config(home, project, "mcp-config", "--lean-plugin", str(plugin)).json()
    assert config["lean_cmd"][1:] == ["serve", "--", f"--plugin={plugin.resolve()}"]
    assert config["lean_plugin"] == str(plugin.resolve())


def test_missing_plugin_is_a_usage_error(home: Path, tmp_path: Path) -> None:
    install_fake_elan(home / ".elan")
    project = make_project(tmp_path / "proj")
    result = mcp_config(home, project, "mcp-config", "--lean-plugin", str(tmp_path / "nope.so"))
    assert result.code == 2 and result.stdout == ""


@pytest.mark.parametrize(
    ("toolchain", "kind"),
    [
        ("leanprover/lean4:nightly-2025-11-02", "nightly"),
        ("leanprover/lean4-nightly:nightly-2025-11-02", "nightly"),
        ("leanprover/lean4-pr-releases:pr-release-9876", "pr"),
        ("my-local-build", "linked"),
    ],
)
def test_unversioned_toolchains_pass_with_a_warning(
    home: Path, tmp_path: Path, toolchain: str, kind: str
) -> None:
    install_fake_elan(home / ".elan")
    project = make_project(tmp_path / "proj", toolchain)
    result = mcp_config(home, project, "mcp-config")
    assert result.code == 0, result.stderr
    (warning,) = result.json()["warnings"]
    assert kind in warning


@pytest.mark.parametrize(
    "toolchain", ["leanprover/lean4:v4.24.0", "v4.24.1", "leanprover/lean4:v4.30.0-rc2", "4.25.0"]
)
def test_releases_at_or_above_the_floor_pass(home: Path, tmp_path: Path, toolchain: str) -> None:
    install_fake_elan(home / ".elan")
    project = make_project(tmp_path / "proj", toolchain)
    result = mcp_config(home, project, "mcp-config")
    assert result.code == 0, result.stderr
    assert result.json()["toolchain"] == toolchain


# ---- every error category: exit 1, nothing on stdout, one JSON object on stderr ----


def expect_error(result, category: str) -> dict:  # type: ignore[no-untyped-def]
    assert result.code == 1, (result.stdout, result.stderr)
    error = result.error()
    assert error["category"] == category, error
    return error


def test_not_a_lean_project_when_walking_up(home: Path, tmp_path: Path) -> None:
    install_fake_elan(home / ".elan")
    empty = tmp_path / "empty"
    empty.mkdir()
    expect_error(mcp_config(home, empty, "mcp-config"), "notLeanProject")


@pytest.mark.parametrize("what", ["missing", "file", "plain-dir"])
def test_not_a_lean_project_with_root(home: Path, tmp_path: Path, what: str) -> None:
    install_fake_elan(home / ".elan")
    target = tmp_path / what
    if what == "file":
        target.write_text("x")
    elif what == "plain-dir":
        target.mkdir()
    error = expect_error(
        mcp_config(home, tmp_path, "--root", str(target), "mcp-config"), "notLeanProject"
    )
    assert "--root" in error["fix"]


@pytest.mark.parametrize("content", [None, "", "\n  \n"])
def test_missing_or_empty_toolchain_file(home: Path, tmp_path: Path, content: str | None) -> None:
    install_fake_elan(home / ".elan")
    project = make_project(tmp_path / "proj", None)
    if content is not None:
        (project / "lean-toolchain").write_text(content)
    error = expect_error(mcp_config(home, project, "mcp-config"), "missingToolchainFile")
    assert "lean-toolchain" in error["message"]


def test_nothing_installed_is_elan_not_found(home: Path, tmp_path: Path) -> None:
    project = make_project(tmp_path / "proj")
    error = expect_error(mcp_config(home, project, "mcp-config"), "elanNotFound")
    assert "elan" in error["fix"]


def test_elan_without_lake_is_lake_not_found(home: Path, tmp_path: Path) -> None:
    install_fake_elan(home / ".elan", with_lake=False)
    project = make_project(tmp_path / "proj")
    error = expect_error(mcp_config(home, project, "mcp-config"), "lakeNotFound")
    assert "toolchain install" in error["fix"]


@pytest.mark.parametrize(
    "toolchain", ["leanprover/lean4:v4.23.0", "v4.9.1", "leanprover/lean4:v4.24.0-rc1", "v3.51.1"]
)
def test_old_release_is_unsupported(home: Path, tmp_path: Path, toolchain: str) -> None:
    install_fake_elan(home / ".elan")
    project = make_project(tmp_path / "proj", toolchain)
    error = expect_error(mcp_config(home, project, "mcp-config"), "toolchainUnsupported")
    assert TOOLCHAIN_FLOOR in error["message"] and TOOLCHAIN_FLOOR in error["fix"]


def test_failing_lake_is_not_runnable(home: Path, tmp_path: Path) -> None:
    install_fake_elan(home / ".elan")
    project = make_project(tmp_path / "proj")
    error = expect_error(
        mcp_config(home, project, "mcp-config", FAKE_LAKE_MODE="fail"), "toolchainNotRunnable"
    )
    assert "told to fail" in error["details"]["stderr_tail"]


def test_hanging_lake_is_bounded(home: Path, tmp_path: Path) -> None:
    install_fake_elan(home / ".elan")
    project = make_project(tmp_path / "proj")
    result = mcp_config(
        home, project, "mcp-config", FAKE_LAKE_MODE="hang", BEAM_TOOLCHAIN_PROBE_TIMEOUT_S="1"
    )
    error = expect_error(result, "toolchainNotRunnable")
    assert "did not finish" in error["message"]


def test_unknown_flag_is_a_usage_error(home: Path, tmp_path: Path) -> None:
    result = mcp_config(home, tmp_path, "mcp-config", "--bogus")
    assert result.code == 2 and result.stdout == ""
