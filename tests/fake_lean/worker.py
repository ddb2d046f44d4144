"""A stand-in for one Lean file worker process (started with ``setsid`` by the fake watchdog).

It does no elaboration (the watchdog process does that); it exists so that process management
can be tested: normally it exits when its stdin closes, with FAKE_LEAN_STUBBORN_WORKERS=1 it
ignores SIGTERM, SIGHUP and end of input and lives until killed (or a safety deadline).
"""

import os
import signal
import sys
import time


def main() -> int:
    uri = sys.argv[-1] if len(sys.argv) > 1 else "?"  # ``--worker URI``, as Lean's workers
    sys.stderr.write(f"[{uri}] fake file worker {os.getpid()} started\n")
    sys.stderr.flush()
    if os.environ.get("FAKE_LEAN_STUBBORN_WORKERS", "") in ("1", "true", "yes"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        deadline = time.monotonic() + float(os.environ.get("FAKE_LEAN_WORKER_MAX_LIFE_S", "300"))
        while time.monotonic() < deadline:
            time.sleep(0.2)
        return 0
    while sys.stdin.buffer.read(4096):
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
