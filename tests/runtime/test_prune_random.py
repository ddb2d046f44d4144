"""Randomized safety of `runtime prune --yes` (about 200 trials, in four parallel shards).

One real install; each trial derives runtimes from it, then runs the real prune (through
`<root>/bin/lean-beam`) while the world changes around it:
- live leases held by real processes, started before prune and at its pause points;
- client registrations (Codex, Claude Code, OpenCode, Vibe; some unparsable) written before prune,
  at its pause points and at random moments by a background thread;
- `versions/` entries swapped for symlinks at pause points;
- `current` switched (by an install's own switch) before prune and, at pause points, by a writer
  that ignores the install lock;
- real `lean-beam install` processes started concurrently (they wait for prune's lock).
Prune's pause hook (`BEAM_PRUNE_PAUSE_DIR`) stops it right before each final re-check, so the
test knows exactly what was true when prune decided. Property: no runtime that was current,
active or referenced before prune started, or at the pause before its own re-check, is removed;
a swapped-in symlink and its target are never touched; `current` always resolves.
`BEAM_PRUNE_TRIALS` and `BEAM_PRUNE_SEED` override the trial count and the seed.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
import time
from pathlib import Path

import pytest

from beam_install.current import switch_current
from beam_install.lock import install_lock
from tests.runtime.clienv import client_env, dev_command
from tests.runtime.conftest import LeaseHolder, install_into
from tests.runtime.trees import clone_runtime

TRIALS = int(os.environ.get("BEAM_PRUNE_TRIALS", "200"))
SEED = int(os.environ.get("BEAM_PRUNE_SEED", "20240611"))


class World:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.home = tmp / "home"
        self.home.mkdir()
        self.root = tmp / "beam"
        self.base = install_into(self.home, self.root)
        # the source of every derived runtime stays alive: a real process holds its lease
        self.anchor = LeaseHolder(self.root, self.base)
        self.variant = 0
        self.lock = threading.Lock()
        self.registrations: dict[str, dict[str, str]] = {}  # client -> name -> command
        self.registered: set[str] = set()
        self.holders: list[LeaseHolder] = []
        self.held: set[str] = set()
        self.swapped: dict[str, Path] = {}
        self.installs: list[subprocess.Popen[str]] = []

    # -- runtimes --
    def valid_ids(self) -> list[str]:
        versions = self.root / "versions"
        return sorted(
            n
            for n in os.listdir(versions)
            if not (versions / n).is_symlink() and (versions / n).is_dir()
        )

    def top_up(self, rng: random.Random) -> None:
        want = rng.randint(3, 7)
        while len(self.valid_ids()) < want + 1:
            self.variant += 1
            stamp = f"202{rng.randint(0, 5)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T00:00:00Z"
            clone_runtime(self.root, self.base, variant=str(self.variant), created_at=stamp)

    # -- registrations --
    def register(self, rng: random.Random, runtime_id: str, *, counted: bool = True) -> None:
        """Register `runtime_id` with a random client; `counted`: it is protected from now on.

        The chaos thread's registrations are not counted: written at a random moment, one can
        land between prune's final re-check and its rename, so prune may rightly remove that
        runtime (it was not referenced when prune decided).
        """
        client = rng.choice(["codex", "claude", "opencode", "vibe"])
        command = f"{self.root}/versions/{runtime_id}/bin/lean-beam-mcp"
        with self.lock:
            servers = self.registrations.setdefault(client, {})
            servers[f"s{len(servers)}"] = command
            self._write(client, servers)
            if counted:
                self.registered.add(runtime_id)

    def _write(self, client: str, servers: dict[str, str]) -> None:
        if client == "codex":
            path = self.home / ".codex" / "config.toml"
            text = "".join(
                f"[mcp_servers.{n}]\ncommand = {json.dumps(c)}\n" for n, c in servers.items()
            )
        elif client == "vibe":
            path = self.home / ".vibe" / "config.toml"
            text = "".join(
                f'[[mcp_servers]]\nname = "{n}"\ncommand = {json.dumps(c)}\n'
                for n, c in servers.items()
            )
        elif client == "claude":
            path = self.home / ".claude.json"
            text = json.dumps(
                {
                    "projects": {
                        "/w": {"mcpServers": {n: {"command": c} for n, c in servers.items()}}
                    }
                }
            )
        else:
            path = self.home / ".config" / "opencode" / "opencode.json"
            text = json.dumps(
                {"mcp": {n: {"type": "local", "command": [c]} for n, c in servers.items()}}
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, path)  # clients write atomically too; a torn file would fail closed

    def register_broken(self, runtime_id: str) -> None:
        path = self.home / ".config" / "opencode" / "opencode.jsonc"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'{{"mcp": {{"x": {{"command": ["{self.root}/versions/{runtime_id}"')
        self.registered.add(runtime_id)

    # -- leases, symlinks, current, installs --
    def hold(self, runtime_id: str) -> None:
        holder = LeaseHolder(self.root, runtime_id)
        self.holders.append(holder)
        if holder.held:
            self.held.add(runtime_id)

    def swap_for_symlink(self, runtime_id: str) -> None:
        entry = self.root / "versions" / runtime_id
        if entry.is_symlink() or not entry.is_dir():
            return
        aside = self.tmp / "aside" / runtime_id
        aside.parent.mkdir(exist_ok=True)
        os.rename(entry, aside)
        os.symlink(aside, entry)
        self.swapped[runtime_id] = aside

    def switch_with_lock(self, runtime_id: str) -> None:
        with install_lock(self.root, timeout=30, command="test switch"):
            switch_current(self.root, runtime_id)

    def start_install(self) -> None:
        argv = [
            dev_command("lean-beam"),
            "install",
            "--install-root",
            str(self.root),
            "--bin-dir",
            str(self.home / ".local" / "bin"),
            "--json",
        ]
        self.installs.append(
            subprocess.Popen(
                argv,
                env=client_env(self.home),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
        )

    def protected(self) -> set[str]:
        target = os.readlink(self.root / "current")  # "versions/<id>", maybe a swapped entry
        current = target.split("/", 1)[1] if target.startswith("versions/") else None
        held = self.held | {self.base}
        return self.registered | held | set(self.swapped) | ({current} if current else set())

    def reset(self) -> None:
        for holder in self.holders:
            holder.stop()
        for proc in self.installs:
            _out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
        for runtime_id, aside in self.swapped.items():
            entry = self.root / "versions" / runtime_id
            entry.unlink()
            os.rename(aside, entry)
        for path in (self.home / ".codex", self.home / ".vibe", self.home / ".config"):
            if path.exists():
                for child in path.rglob("*"):
                    if child.is_file():
                        child.unlink()
        (self.home / ".claude.json").unlink(missing_ok=True)
        self.registrations.clear()
        self.registered.clear()
        self.holders.clear()
        self.held.clear()
        self.swapped.clear()
        self.installs.clear()


def _chaos(world: World, rng: random.Random, stop: threading.Event) -> None:
    while not stop.wait(rng.uniform(0.005, 0.05)):
        ids = world.valid_ids()
        if ids:
            world.register(rng, rng.choice(ids), counted=False)


def _drive(
    world: World,
    rng: random.Random,
    proc: subprocess.Popen[str],
    pause: Path,
    decided: dict[str, bool],
) -> None:
    """Answer prune's pauses, changing the world at each one."""
    step = 0
    while True:
        waiting = pause / f"{step}.waiting"
        while not waiting.exists():
            if proc.poll() is not None:
                return
            time.sleep(0.002)
        runtime_id = waiting.read_text()
        ids = world.valid_ids()
        if rng.random() < 0.3:
            world.register(rng, runtime_id if rng.random() < 0.7 else rng.choice(ids))
        if rng.random() < 0.25:
            world.hold(runtime_id if rng.random() < 0.7 else rng.choice(ids))
        if rng.random() < 0.12:
            world.swap_for_symlink(runtime_id)
        if rng.random() < 0.08:
            switch_current(world.root, runtime_id)  # a writer that ignores the install lock
        decided[runtime_id] = runtime_id in world.protected()
        (pause / f"{step}.go").touch()
        step += 1


def _trial(world: World, rng: random.Random, trial: int) -> None:
    world.top_up(rng)
    ids = world.valid_ids()
    for runtime_id in ids:
        if rng.random() < 0.15:
            world.register(rng, runtime_id)
        if rng.random() < 0.15:
            world.hold(runtime_id)
    if rng.random() < 0.05:
        world.register_broken(rng.choice(ids))
    if rng.random() < 0.2:
        world.switch_with_lock(rng.choice(ids))
    if rng.random() < 0.08:
        world.start_install()
    before = world.protected()
    pause = world.tmp / f"pause-{trial}"
    pause.mkdir()
    use_pause = rng.random() < 0.85
    env = client_env(world.home, **({"BEAM_PRUNE_PAUSE_DIR": str(pause)} if use_pause else {}))
    keep = str(rng.randint(0, 3))
    proc = subprocess.Popen(
        [
            str(world.root / "bin" / "lean-beam"),
            "runtime",
            "prune",
            "--yes",
            "--json",
            "--keep-latest",
            keep,
            "--lock-timeout",
            "60",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stop = threading.Event()
    chaos = threading.Thread(target=_chaos, args=(world, random.Random(rng.random()), stop))
    if rng.random() < 0.3:
        chaos.start()
    decided: dict[str, bool] = {}
    try:
        if use_pause:
            _drive(world, rng, proc, pause, decided)
        out, err = proc.communicate(timeout=120)
    finally:
        stop.set()
        if chaos.is_alive():
            chaos.join()
    where = f"trial {trial} (seed {SEED} + shard {trial % SHARDS}): {err}"
    if proc.returncode != 0:
        # the only acceptable refusal: a concurrent switch made this runtime non-current
        assert json.loads(err)["error"]["category"] == "runtimeNotCurrent", where
        return
    body = json.loads(out)
    removed = set(body["removed"])
    assert not removed & before, where
    assert not {rid for rid in removed if decided.get(rid)}, where
    assert removed <= set(body["planned"]), where
    versions = world.root / "versions"
    for runtime_id in removed:
        assert not os.path.lexists(versions / runtime_id), where
    missing = {rid for rid in world.protected() if not os.path.lexists(versions / rid)}
    assert not missing, f"{where}; protected but gone: {sorted(missing)}; removed: {removed}"
    for runtime_id, aside in world.swapped.items():
        assert (versions / runtime_id).is_symlink(), where
        assert (aside / "manifest.json").is_file(), where
    trash = world.root / "state" / "trash"  # made by the first prune that removes something
    assert not trash.exists() or os.listdir(trash) == [], where
    # `current` still resolves to a runtime (through a swapped-in symlink if the test made one)
    assert (Path(os.path.realpath(world.root / "current")) / "manifest.json").is_file(), where


SHARDS = 4  # the trials in independent parts (seeds SEED, SEED + 1, ...) for parallel workers


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("shard", range(SHARDS))
def test_prune_never_removes_a_protected_runtime(tmp_path: Path, shard: int) -> None:
    world = World(tmp_path)
    rng = random.Random(SEED + shard)
    try:
        for trial in range(shard, TRIALS, SHARDS):
            try:
                _trial(world, rng, trial)
            finally:
                world.reset()
    finally:
        world.reset()
        world.anchor.stop()
