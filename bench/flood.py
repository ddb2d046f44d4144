"""Peak RSS of the MCP server under a flood of requests whose answers nobody reads.

Starts `python -m beam_mcp` with the test-only sleep backend, enters phase 2 with one call,
then writes N modern `tools/list` requests (~35 KB answer each) from a thread while reading
nothing for `--pause` seconds, sampling the server's RSS every 20 ms; then reads every answer
and checks each id came back once. Prints one JSON object.

Run: `.venv-test/bin/python bench/flood.py [--lines 20000] [--pause 5] [--repo PATH]`
(`--repo` runs another checkout's server, e.g. /work/main, for a before/after figure).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parents[1]
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _line(rid: int, method: str, params: dict) -> bytes:
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": META}}
    return json.dumps(body).encode() + b"\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--pause", type=float, default=5.0)
    parser.add_argument("--repo", type=Path, default=HERE)
    opts = parser.parse_args()
    env = {k: os.environ[k] for k in ("HOME", "PATH", "USER") if k in os.environ}
    env["PYTHONPATH"] = str(opts.repo)
    env["LEAN_BEAM_MCP_BACKEND"] = f"{opts.repo}/tests/mcp/sleep_backend.py:create_backend"
    proc = subprocess.Popen(
        [sys.executable, "-m", "beam_mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=str(opts.repo),
    )
    assert proc.stdin is not None and proc.stdout is not None
    project = Path(tempfile.mkdtemp(prefix="flood-"))
    (project / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    call = {"name": "lean_sync", "arguments": {"workspace": {"root": str(project)}, "path": "1ms"}}
    proc.stdin.write(_line(0, "tools/call", call))
    proc.stdin.flush()
    assert b'"isError":false' in proc.stdout.readline(), "the first call failed: no phase 2"
    process = psutil.Process(proc.pid)
    before = process.memory_info().rss
    written = 0

    def flood() -> None:
        nonlocal written
        assert proc.stdin is not None
        for rid in range(1, opts.lines + 1):
            proc.stdin.write(_line(rid, "tools/list", {}))
            proc.stdin.flush()
            written += 1
        proc.stdin.close()

    threading.Thread(target=flood, daemon=True).start()
    peak = before
    deadline = time.monotonic() + opts.pause
    while time.monotonic() < deadline:
        peak = max(peak, process.memory_info().rss)
        time.sleep(0.02)
    written_unread = written
    started = time.monotonic()
    ids = [json.loads(line)["id"] for line in proc.stdout]
    drain_s = time.monotonic() - started
    proc.wait(60)
    answered = sorted(rid for rid in ids if rid != 0)
    print(
        json.dumps(
            {
                "lines": opts.lines,
                "rss_before_mib": round(before / 2**20, 1),
                "peak_rss_mib": round(peak / 2**20, 1),
                "requests_accepted_while_unread": written_unread,
                "every_answer_once": answered == list(range(1, opts.lines + 1)),
                "drain_s": round(drain_s, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
