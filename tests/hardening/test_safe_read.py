"""`beam_runtime.safe_read` against real files of every kind that can stall or exhaust a reader."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from beam_runtime import safe_read
from beam_runtime.safe_read import RefusedRead
from tests.support.slowfs import slow_mount


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.lean"
    os.mkfifo(path)
    return path


def _huge(tmp_path: Path, size: int) -> Path:
    path = tmp_path / "huge.lean"
    with open(path, "wb") as handle:
        handle.truncate(size)  # sparse: costs no disk
    return path


def _kinds(tmp_path: Path) -> list[tuple[str, str]]:
    sock_path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    return [
        (str(_fifo(tmp_path)), "a FIFO"),
        ("/dev/zero", "a character device"),
        ("/dev/null", "a character device"),
        (str(tmp_path), "a directory"),
        (str(sock_path), "a socket"),
    ]


def test_non_regular_files_are_refused_at_once(tmp_path: Path) -> None:
    for path, kind in _kinds(tmp_path):
        for reader in (safe_read.read_regular, safe_read.read_bounded):
            with pytest.raises(OSError) as caught:
                reader(path, safe_read.SMALL_CAP)
            if kind == "a socket":  # a unix socket cannot be opened at all: ENXIO
                continue
            assert isinstance(caught.value, RefusedRead), (path, caught.value)
            assert caught.value.reason == "notRegular"
            assert kind in str(caught.value)


def test_a_fifo_with_a_writer_that_never_writes_is_refused(tmp_path: Path) -> None:
    path = _fifo(tmp_path)
    writer = os.open(path, os.O_RDWR)  # a writer exists: a plain read would wait for data
    try:
        with pytest.raises(RefusedRead):
            safe_read.read_bounded(str(path), safe_read.SMALL_CAP)
    finally:
        os.close(writer)


def test_a_file_over_the_cap_is_refused_and_names_the_cap(tmp_path: Path) -> None:
    path = _huge(tmp_path, safe_read.SOURCE_CAP + 1)
    with pytest.raises(RefusedRead) as caught:
        safe_read.read_regular(str(path), safe_read.SOURCE_CAP)
    assert caught.value.reason == "tooLarge" and "16 MiB cap" in str(caught.value)


def test_a_file_that_grows_past_the_cap_while_read_is_cut(tmp_path: Path) -> None:
    # /proc files say size 0 and then deliver bytes: the cap holds without trusting st_size.
    with pytest.raises(RefusedRead) as caught:
        safe_read.read_regular("/proc/self/maps", 16)
    assert caught.value.reason == "tooLarge"


def test_a_file_at_the_cap_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "ok.lean"
    path.write_bytes(b"x" * 1000)
    assert safe_read.read_regular(str(path), 1000) == b"x" * 1000
    assert safe_read.read_bounded(str(path), 1000) == b"x" * 1000
    with pytest.raises(RefusedRead):
        safe_read.read_regular(str(path), 999)


def test_missing_and_unopenable_files_keep_their_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        safe_read.read_bounded(str(tmp_path / "nope"), 10)


def test_async_reads_leave_the_loop_free(tmp_path: Path) -> None:
    """The loop keeps ticking while reads of every bad kind are refused in worker threads."""
    paths = [p for p, _ in _kinds(tmp_path)] + [str(_huge(tmp_path, safe_read.SOURCE_CAP * 2))]

    async def main() -> list[str]:
        ticks = 0
        reasons: list[str] = []

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await anyio.sleep(0.001)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            for path in paths:
                try:
                    await safe_read.read_async(path, safe_read.SOURCE_CAP, timeout=5)
                except RefusedRead as exc:
                    reasons.append(exc.reason)
                except OSError:
                    reasons.append("os")
            await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
        return reasons

    assert anyio.run(main) == ["notRegular"] * 4 + ["os", "tooLarge"]


def test_a_read_that_hangs_becomes_a_timeout(tmp_path: Path) -> None:
    """A read stuck in the kernel (here a FUSE file whose reads never finish, as on a hung NFS
    mount) is abandoned after the bound, by the thread and the event-loop readers alike, and a
    file beside it still reads."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "Slow.lean").write_text("theorem slow : True := trivial\n")
    (source / "Fine.lean").write_text("theorem fine : True := trivial\n")
    with slow_mount(source, tmp_path / "mnt", hang_read=("Slow.lean",)) as mount:
        with pytest.raises(RefusedRead) as caught:
            safe_read.read_bounded(str(mount / "Slow.lean"), safe_read.SMALL_CAP, timeout=0.5)
        assert caught.value.reason == "timeout" and "0.5 s" in caught.value.strerror

        async def main() -> tuple[str, int]:
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    ticks += 1
                    await anyio.sleep(0.001)

            async with anyio.create_task_group() as tg:
                tg.start_soon(ticker)
                await anyio.sleep(0)  # the ticker's first tick happens before the read
                ticks = 0
                with pytest.raises(RefusedRead) as late:
                    await safe_read.read_async(str(mount / "Slow.lean"), safe_read.SMALL_CAP, 0.5)
                tg.cancel_scope.cancel()
            return late.value.reason, ticks

        reason, ticks = anyio.run(main)
        # the loop kept running while the read hung: a blocked loop would not tick at all
        assert reason == "timeout" and ticks >= 10, ticks
        assert safe_read.read_bounded(str(mount / "Fine.lean"), safe_read.SMALL_CAP, 5).startswith(
            b"theorem fine"
        )


NO_THREAD = r"""
import resource, sys
from beam_runtime import safe_read
with open("/proc/self/status") as status:
    vm = next(int(line.split()[1]) for line in status if line.startswith("VmSize:")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + (2 << 20), resource.RLIM_INFINITY))
try:
    safe_read.read_bounded(sys.argv[1], safe_read.SMALL_CAP, 5)
except safe_read.RefusedRead as exc:
    print("refused", exc.reason)
else:
    print("read")
"""


def test_no_thread_left_is_a_refused_read(tmp_path: Path) -> None:
    """When no thread can be started (here: no address space for its stack), a bounded read is
    a `RefusedRead` (an `OSError` every caller reports), not a `RuntimeError` traceback."""
    path = tmp_path / "A.lean"
    path.write_text("def a := 1\n")
    done = subprocess.run(
        [sys.executable, "-c", NO_THREAD, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert done.stdout.strip() == "refused noThread", (done.stdout, done.stderr[-1000:])


TIMED_READ = r"""
import sys, time
from beam_runtime import safe_read
started = time.monotonic()
try:
    safe_read.read_bounded(sys.argv[1], safe_read.SMALL_CAP)  # the default bound, from the env
except safe_read.RefusedRead as exc:
    print(exc.reason, round(time.monotonic() - started, 3), flush=True)
# The abandoned thread stays stuck in the kernel until the mount goes: let go of stdout now, so
# that the test reads its answer without waiting for the whole process to end.
import os
devnull = os.open(os.devnull, os.O_WRONLY)
os.dup2(devnull, 1)
os.dup2(devnull, 2)
"""


def test_the_read_bound_is_in_seconds(tmp_path: Path) -> None:
    """BEAM_READ_TIMEOUT_S=1: a stuck read gives up after about one second, not at once and not
    after the ten-second default (or a thousand)."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "Slow.lean").write_text("theorem slow : True := trivial\n")
    with slow_mount(source, tmp_path / "mnt", hang_read=("Slow.lean",)) as mount:
        child = subprocess.Popen(
            [sys.executable, "-c", TIMED_READ, str(mount / "Slow.lean")],
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
            env={**os.environ, "BEAM_READ_TIMEOUT_S": "1"},
        )
        assert child.stdout is not None
        ready, _, _ = select.select([child.stdout], [], [], 20)  # a bound of 1,000 s: no answer
        if not ready:
            child.kill()
        answer = child.stdout.readline() if ready else ""
    child.wait(timeout=30)  # the unmount released the stuck thread
    assert ready, "no answer within 20 s: the bound was not taken in seconds"
    reason, waited = answer.split()
    assert reason == "timeout"
    assert 0.9 <= float(waited) < 5, waited


def test_a_prelude_rides_with_the_next_call_of_its_own_task_only(tmp_path: Path) -> None:
    """The check runs once, in the thread trip of the first bounded call the arming task makes
    (not in a task it started); a failing check ends that call and stays on record even when
    the caller swallows it."""
    path = tmp_path / "A.lean"
    path.write_text("def a := 1\n")
    seen: list[str] = []

    def check() -> None:
        seen.append("check")
        raise LookupError("moved")

    async def main() -> tuple[list[str], bool, bool]:
        prelude = safe_read.Prelude(check)
        with prelude:
            async with anyio.create_task_group() as tg:
                tg.start_soon(safe_read.read_async, str(path), 100)  # another task: no check
            after_child = prelude.pending
            with pytest.raises(LookupError):
                await safe_read.read_async(str(path), 100)
            assert seen == ["check"]
            await safe_read.read_async(str(path), 100)  # taken: this call runs alone
        return seen, after_child, isinstance(prelude.failure, LookupError)

    assert anyio.run(main) == (["check"], True, True)
