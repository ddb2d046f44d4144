"""`beam-cli mcp-config`: how the MCP server should start Lean for one project."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from beam_runtime.errors import BeamError
from beam_runtime.toolchain import (
    PROJECT_FILES,
    classify_toolchain,
    find_project_root,
    is_project_dir,
    locate_lake,
    path_with_first,
    probe_timeout,
    read_toolchain_file,
    run_probe,
)


@dataclass
class McpConfig:
    root: Path
    toolchain: str
    lean_cmd: list[str]
    lean_plugin: str | None
    env: dict[str, str]
    runtime_id: str | None
    runtime_version: str
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "toolchain": self.toolchain,
            "lean_cmd": self.lean_cmd,
            "lean_plugin": self.lean_plugin,
            "env": self.env,
            "runtime": {"id": self.runtime_id, "version": self.runtime_version},
            "warnings": self.warnings,
        }

    def to_text(self) -> str:  # mcp-config always prints JSON; this keeps the protocol whole
        import json

        return json.dumps(self.to_json(), indent=2)


def resolve_project_root(explicit: str | None, cwd: Path) -> Path:
    """The canonical project root: `--root`, else the nearest project at or above `cwd`."""
    expected = ", ".join(PROJECT_FILES)
    if explicit is None:
        found = find_project_root(cwd.resolve())
        if found is None:
            raise BeamError(
                "notLeanProject",
                f"no Lean/Lake project at or above {cwd} (looked for {expected})",
                "run from inside a Lean project or pass `--root PATH`",
            )
        return found
    root = (cwd / Path(explicit).expanduser()).resolve()
    if not root.is_dir():
        raise BeamError(
            "notLeanProject",
            f"project root {root} is not a directory",
            "pass `--root` the directory that holds lean-toolchain and the lakefile",
        )
    if not is_project_dir(root):
        raise BeamError(
            "notLeanProject",
            f"{root} is not a Lean/Lake project (expected one of {expected})",
            "pass `--root` the directory that holds lean-toolchain and the lakefile",
        )
    return root


def _runtime_pairing() -> tuple[str | None, str]:
    from beam_runtime.identity import runtime_identity

    identity = runtime_identity("beam-cli")
    return identity.get("runtime_id"), str(identity["version"])


def build_mcp_config(
    explicit_root: str | None,
    *,
    cwd: Path,
    env: Mapping[str, str],
    lean_plugin: str | None = None,
) -> McpConfig:
    root = resolve_project_root(explicit_root, cwd)
    toolchain = read_toolchain_file(root)
    spec = classify_toolchain(toolchain)
    location = locate_lake(env, toolchain)
    overrides = {
        "PATH": path_with_first(location.elan_bin or location.lake.parent, env.get("PATH", ""))
    }
    probe_env = {**env, **overrides}
    run_probe([str(location.lake), "--version"], root, probe_env, probe_timeout(env))
    lean_cmd = [str(location.lake), "serve", "--"]
    plugin = None
    if lean_plugin is not None:
        plugin = os.path.realpath(Path(lean_plugin).expanduser())
        lean_cmd.append(f"--plugin={plugin}")
    runtime_id, version = _runtime_pairing()
    return McpConfig(
        root=root,
        toolchain=toolchain,
        lean_cmd=lean_cmd,
        lean_plugin=plugin,
        env=overrides,
        runtime_id=runtime_id,
        runtime_version=version,
        warnings=[spec.warning] if spec.warning else [],
    )
