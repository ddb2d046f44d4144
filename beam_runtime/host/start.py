"""Reaching a workspace's host: connect to it, or start it under its lock and then connect.

The lock file beside the socket is held by the live host for its whole life (``main``). An
agent first tries the socket; when nobody answers it tries the lock without waiting: got it,
no host is alive, so it removes nothing, starts the host with that very lock descriptor (the
host keeps it; the kernel drops it when the host dies) and waits for the socket to answer;
busy, a host is alive or being started by another agent, so it waits for the socket or for the
lock to come free. Concurrent first calls therefore end on one host, with no pid file and no
health probe to race. The host runs in its own session, so a client's exit or Ctrl-C does not
reach it, and inherits this process's environment (Lean sees the same variables).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import subprocess
import sys
import threading
import time

import anyio
from anyio.abc import SocketStream

from beam_runtime.host.config import HostConfig
from beam_runtime.host.place import Unavailable, prepare_dir

START_TIMEOUT_S = 30.0
_POLL_S = 0.02

_BOOT = (
    "import sys, json; sys.path[:] = json.loads(sys.argv.pop(1)); "
    "from beam_runtime.host.main import main; raise SystemExit(main(sys.argv[1:]))"
)


async def connect(path: str) -> SocketStream | None:
    """A connection to the socket at ``path``, or None when nobody listens there."""
    try:
        return await anyio.connect_unix(path)
    except (FileNotFoundError, ConnectionRefusedError):
        return None
    except PermissionError as error:
        raise Unavailable("socketRefused", f"cannot connect to {path}: {error.strerror}") from None
    except OSError as error:
        if error.errno in (errno.ECONNREFUSED, errno.ENOENT, errno.EAGAIN):
            return None
        raise Unavailable("socketRefused", f"cannot connect to {path}: {error}") from None


async def reach(config: HostConfig, timeout_s: float = START_TIMEOUT_S) -> SocketStream:
    """A connected stream to the workspace's host, starting it first when none runs."""
    place = config.place
    await anyio.to_thread.run_sync(prepare_dir, place.directory)
    deadline = time.monotonic() + timeout_s
    started: subprocess.Popen[bytes] | None = None
    while True:
        stream = await connect(place.socket)
        if stream is not None:
            return stream
        if started is not None and started.returncode is not None:  # set by its reaper thread
            raise Unavailable("hostDidNotStart", _early_exit(config, started))
        if started is None:
            started = _start_if_free(config)
        if time.monotonic() >= deadline:
            raise Unavailable(
                "hostDidNotStart",
                f"the Lean host at {place.socket} did not answer within {timeout_s:g} s",
            )
        await anyio.sleep(_POLL_S)


def _start_if_free(config: HostConfig) -> subprocess.Popen[bytes] | None:
    """Starts the host when its lock is free (no host alive); None when a host holds it."""
    place = config.place
    try:
        fd = os.open(place.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as error:
        raise Unavailable(
            "socketDirUnusable", f"cannot create {place.lock}: {error.strerror}"
        ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None
        return spawn(config, fd)
    finally:
        os.close(fd)  # the host keeps its own copy of the locked descriptor


def spawn(config: HostConfig, lock_fd: int) -> subprocess.Popen[bytes]:
    """Starts the host process detached, handing it ``lock_fd`` (locked by the caller)."""
    flags = ["-I"]
    if sys.flags.no_site:
        flags.append("-S")
    if sys.dont_write_bytecode:
        flags.append("-B")
    argv = [
        sys.executable,
        *flags,
        "-c",
        _BOOT,
        json.dumps(sys.path),
        "--lock-fd",
        str(lock_fd),
        config.to_json(),
    ]
    try:
        log = os.open(config.place.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    except OSError as error:
        raise Unavailable(
            "socketDirUnusable", f"cannot create {config.place.log}: {error.strerror}"
        ) from None
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            pass_fds=(lock_fd,),
            start_new_session=True,  # no signal of the client's terminal or group reaches it
            cwd="/",
        )
    except OSError as error:
        raise Unavailable("hostDidNotStart", f"cannot start the Lean host: {error}") from None
    finally:
        os.close(log)
    # Reap it when it ends while this process still lives, so it never lingers as a zombie.
    threading.Thread(target=process.wait, name="host-reaper", daemon=True).start()
    return process


def _early_exit(config: HostConfig, process: subprocess.Popen[bytes]) -> str:
    tail = ""
    with contextlib.suppress(OSError), open(config.place.log, "rb") as handle:
        tail = handle.read()[-2000:].decode("utf-8", "replace").strip()
    detail = f": {tail.splitlines()[-1]}" if tail else ""
    return f"the Lean host exited with code {process.returncode} while starting{detail}"
