"""The host process's entry point: ``main(["--lock-fd", N, CONFIG])``.

Started detached by ``start.spawn`` with the interpreter, flags and ``sys.path`` of the agent
that starts it (its own session, stdin and stdout on /dev/null, stderr on the log beside the
socket), it receives the lock descriptor its starter locked and keeps it for
its whole life: the kernel releases the lock when the host dies, however it dies. It takes the
runtime's lease like every process of an installed runtime, binds the socket and serves.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="beam-host")
    parser.add_argument("--lock-fd", type=int, required=True)
    parser.add_argument("config")
    args = parser.parse_args(argv)
    from beam_runtime.host.config import HostConfig

    config = HostConfig.from_json(args.config)
    lock_fd = args.lock_fd
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # ours already: a no-op check
    except OSError as error:
        sys.stderr.write(f"host: the lock is not ours ({error}); exiting\n")
        return 1
    os.set_inheritable(lock_fd, False)  # no Lean process may keep the host's lock
    lease = _take_lease()
    from beam_runtime.host.transport import bind_listener

    try:
        listener = bind_listener(config.place.socket)
    except OSError as error:
        sys.stderr.write(f"host: cannot bind {config.place.socket}: {error}\n")
        return 1
    import anyio

    from beam_runtime.host.server import Host

    host = Host(config)
    anyio.run(host.serve, listener)
    del lease
    return 0


def _take_lease() -> int | None:
    """The runtime's shared lease when this code runs from an installed runtime."""
    from beam_runtime.identity import code_runtime_dir
    from beam_runtime.leases import LeaseRefused, acquire_shared

    runtime = code_runtime_dir()
    if runtime is None:
        return None
    try:
        return acquire_shared(os.path.dirname(os.path.dirname(runtime)), os.path.basename(runtime))
    except LeaseRefused as refusal:
        sys.stderr.write(f"host: {refusal.message}\n")
        raise SystemExit(1) from None
