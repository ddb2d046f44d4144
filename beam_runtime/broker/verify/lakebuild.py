"""``lake build +Mod...`` for ``lean_verify``: bounded, Lake's job lines forwarded, output parsed.

What is read from Lake's output: job lines (``✔``/``⚠ [i/n] Built M``, ``✖ [i/n] Building M``),
the ``Some required targets logged failures:`` list, and messages ``error: <file>:<line>:<col>:
...`` and ``warning: ...`` (any number of leading ``./``; continuation lines belong to the message
before them). On timeout or cancellation Lake's whole
process group is killed.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
from anyio.abc import Process

from beam_runtime.broker import errors
from beam_runtime.lsp.reaper import marked_environment

_JOB = re.compile(r"^([✔✖⚠]) \[\d+/\d+\] (\w+) (\S+)")
_MESSAGE = re.compile(r"^(error|warning): (?:\./)*(.+?\.lean):(\d+):(\d+): (.*)$")
_LISTED = re.compile(r"^- (\S+)$")
_NEW_ITEM = re.compile(
    r"^(?:[✔✖⚠ℹ⣿] |error:|warning:|info:|trace:|Some required|Build completed|- )"
)
_MESSAGE_CHARS = 600
_TAIL = 20


@dataclass
class BuildOutput:
    finished: bool = False  # False: Lake was stopped at the deadline
    exit_code: int | None = None
    lines: list[str] = field(default_factory=list)
    built: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    errors: list[dict] = field(default_factory=list)  # {path (as Lake wrote it), line, message}
    warnings: list[dict] = field(default_factory=list)  # the same, for Lake's warning lines

    def tail(self) -> list[str]:
        return self.lines[-_TAIL:]


class _Parser:
    def __init__(self, out: BuildOutput, forward: Callable[[str], None]) -> None:
        self.out = out
        self.forward = forward
        self.listing = False
        self.current: dict | None = None

    def line(self, text: str) -> None:
        self.out.lines.append(text)
        job = _JOB.match(text)
        if job is not None:
            module = job.group(3).split(":")[0]
            (self.out.failed if job.group(1) == "✖" else self.out.built).add(module)
            self.forward(text)
        if _NEW_ITEM.match(text):
            self.current = None
        message = _MESSAGE.match(text)
        if message is not None:
            self.current = {
                "path": message.group(2),
                "line": int(message.group(3)),
                "message": message.group(5),
            }
            found = self.out.errors if message.group(1) == "error" else self.out.warnings
            found.append(self.current)
            return
        if text.startswith("Some required targets logged failures"):
            self.listing = True
            return
        listed = _LISTED.match(text)
        if self.listing and listed is not None:
            self.out.failed.add(listed.group(1).split(":")[0])
            return
        self.listing = False
        if self.current is not None and job is None:
            joined = self.current["message"] + "\n" + text
            self.current["message"] = joined[:_MESSAGE_CHARS]


async def lake_build(
    lake: str,
    modules: list[str],
    *,
    cwd: str,
    env: dict[str, str],
    limit_s: float,
    forward: Callable[[str], None],
) -> BuildOutput:
    out = BuildOutput()
    process = await start_build(lake, modules, cwd, env)
    parser = _Parser(out, forward)
    try:
        with anyio.move_on_after(max(0.0, limit_s)):
            await read_lines(process, parser.line)
            out.exit_code = await process.wait()
            out.finished = True
    finally:
        await wind_down(process)
    return out


async def start_build(lake: str, modules: list[str], cwd: str, env: dict[str, str]) -> Process:
    """``lake build +M...`` in its own process group, stdout and stderr as one stream.

    Lake and the compilers it starts carry the watchdog's marker: they die with this process,
    even when it is SIGKILLed.
    """
    try:
        return await anyio.open_process(
            [lake, "build", *(f"+{module}" for module in modules)],
            cwd=cwd,
            env=marked_environment(env),
            stdin=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        raise errors.runtime_setup(
            "lakeNotFound", f"cannot run {lake}: {exc.strerror or exc}", "reinstall elan/lake"
        ) from exc


async def wind_down(process: Process) -> None:
    """A build that has not ended is killed with its group; then it is reaped and closed."""
    if process.returncode is None:
        kill_group(process.pid)
        with anyio.CancelScope(shield=True):
            await process.wait()
    await process.aclose()


async def read_lines(process: Process, on_line: Callable[[str], None]) -> None:
    """Every non-blank line the process prints (the last one too without a newline)."""
    assert process.stdout is not None
    buffer = b""
    async for chunk in process.stdout:
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for raw in lines:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                on_line(line)
    if buffer.strip():
        on_line(buffer.decode("utf-8", "replace").rstrip())


def kill_group(pid: int) -> None:
    """SIGKILL to a process group that may already be gone."""
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
