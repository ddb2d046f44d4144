"""A host of an installed runtime holds that runtime's lease: `runtime list` calls it active
after the agent that started it has exited."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.broker.fake import FAKE_CMD, FAST_FAKE
from tests.host.helpers import hosts_here
from tests.mcp.helpers import call
from tests.support.hosts import wait_gone
from tests.support.installed import Installed


def test_a_host_of_an_installed_runtime_keeps_the_runtime_active(
    installed_root: Installed, project: Path
) -> None:
    env = installed_root.env(**FAST_FAKE)  # the fake Lean is this checkout's (PYTHONPATH)
    agent = subprocess.Popen(
        [installed_root.wrapper("lean-beam-mcp"), "--lean-cmd", FAKE_CMD],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert agent.stdin is not None and agent.stdout is not None
    request = call(1, "lean_sync", {"workspace": {"root": str(project)}, "path": "Main.lean"})
    agent.stdin.write(json.dumps(request).encode() + b"\n")
    agent.stdin.flush()
    answer = json.loads(agent.stdout.readline())  # bounded by the test timeout
    assert answer["result"]["isError"] is False, answer
    _, err = agent.communicate(timeout=60)  # EOF: the agent exits
    assert agent.returncode == 0, err
    [host] = hosts_here()
    assert host.is_running()  # the agent has exited; its host has not
    listing = installed_root.run([installed_root.wrapper("lean-beam"), "runtime", "list", "--json"])
    assert listing.code == 0, listing.stderr
    [runtime] = [r for r in listing.json()["runtimes"] if r["id"] == installed_root.runtime_id]
    assert runtime["active"] is True
    assert host.pid in [holder["pid"] for holder in runtime["active_pids"]]
    stopped = installed_root.run([installed_root.wrapper("lean-beam"), "host", "stop", "--all"])
    assert stopped.code == 0, stopped.stderr
    assert not wait_gone([host.pid], 10)
