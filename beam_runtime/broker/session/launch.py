"""How a workspace's Lean server is started: ``--lean-cmd`` or ``beam-cli mcp-config``.

``--lean-cmd`` wins over ``--beam-cli``. ``mcp-config`` runs bounded; its failures are
``runtimeSetup`` tool errors carrying the category and fix it printed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

import anyio

from beam_runtime.broker.errors import BrokerError, details_text, runtime_setup
from beam_runtime.lsp.reaper import marked_environment


def lake_of(argv: list[str]) -> str | None:
    """The ``lake`` executable of a ``lake serve`` command line, or ``None`` (plain server)."""
    if len(argv) >= 2 and os.path.basename(argv[0]) == "lake" and argv[1] == "serve":
        return argv[0]
    return None


class LaunchSpec(NamedTuple):  # a NamedTuple is ten times cheaper to define than a dataclass
    argv: list[str]
    env: Mapping[str, str] = MappingProxyType({})  # added to ``os.environ``
    toolchain: str | None = None

    @property
    def lake(self) -> str | None:
        return lake_of(self.argv)

    def environment(self) -> dict[str, str]:
        return {**os.environ, **self.env}


async def resolve_launch(
    root: str,
    *,
    lean_cmd: tuple[str, ...] | None,
    beam_cli: str | None,
    timeout_s: float,
) -> LaunchSpec:
    if lean_cmd:
        return LaunchSpec(list(lean_cmd))
    if beam_cli:
        return await _from_mcp_config(root, beam_cli, timeout_s)
    raise runtime_setup(
        "noLeanCommand",
        "lean-beam-mcp does not know how to start Lean",
        "start the server through the installed lean-beam-mcp wrapper (it passes --beam-cli) "
        "or pass --lean-cmd",
    )


async def _from_mcp_config(root: str, beam_cli: str, timeout_s: float) -> LaunchSpec:
    argv = [beam_cli, "--root", root, "mcp-config"]
    try:
        with anyio.fail_after(timeout_s):
            # Marked: it and the `lake --version` it runs die with this process (`reaper`).
            result = await anyio.run_process(argv, cwd=root, env=marked_environment(), check=False)
    except TimeoutError:
        raise runtime_setup(
            "mcpConfigTimeout",
            f"`beam-cli mcp-config` did not answer within {int(timeout_s * 1000)} ms",
            "check that Lake and elan work in this project (`lake --version`), then retry",
        ) from None
    except OSError as exc:
        raise runtime_setup(
            "beamCliNotRunnable",
            f"cannot run {beam_cli}: {exc.strerror or exc}",
            "reinstall lean-beam (`lean-beam install`) or pass --beam-cli a working path",
        ) from exc
    if result.returncode != 0:
        raise _config_failure(result.stderr.decode("utf-8", "replace"))
    return _parse_config(result.stdout.decode("utf-8", "replace"))


def _config_failure(stderr: str) -> BrokerError:
    try:
        error = json.loads(stderr.strip().splitlines()[-1])["error"]
        return runtime_setup(
            str(error["category"]),
            str(error["message"]),
            str(error["fix"]),
            detail=details_text(error.get("details") or error["message"]),
        )
    except (ValueError, KeyError, IndexError, TypeError):
        return runtime_setup(
            "mcpConfigFailed",
            "`beam-cli mcp-config` failed",
            "run `beam-cli --root <root> mcp-config` by hand to see the problem",
            detail=stderr.strip()[-2000:] or "no output",
        )


def _parse_config(stdout: str) -> LaunchSpec:
    try:
        config: dict[str, Any] = json.loads(stdout)
        argv = [str(item) for item in config["lean_cmd"]]
        env = {str(k): str(v) for k, v in (config.get("env") or {}).items()}
        runtime = config.get("runtime") or {}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise runtime_setup(
            "mcpConfigInvalid",
            "`beam-cli mcp-config` printed something that is not a configuration",
            "reinstall lean-beam so beam-cli and lean-beam-mcp come from one runtime",
            detail=stdout[:2000],
        ) from None
    _check_pairing(runtime.get("id"))
    return LaunchSpec(argv, env, config.get("toolchain"))


def _check_pairing(cli_runtime: Any) -> None:
    """``beam-cli`` must belong to this server's runtime; a null id on either side skips it."""
    from beam_runtime.identity import runtime_identity

    own = runtime_identity("lean-beam-mcp").get("runtime_id")
    if cli_runtime is None or own is None or cli_runtime == own:
        return
    raise runtime_setup(
        "runtimeMismatch",
        f"beam-cli belongs to runtime {cli_runtime}, this server to {own}",
        "restart the MCP client so it starts lean-beam-mcp and beam-cli of one runtime",
    )
