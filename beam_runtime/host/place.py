"""Where hosts live: the socket directory, the short hashed names, the lock beside each socket.

A host serves one (canonical root, toolchain, runtime id, setup) and is found at
``<dir>/<name>.sock``, ``name`` being 16 hex digits of a hash of those, so the path stays
short (Unix socket paths are limited to about 100 bytes). The setup is how Lean is launched,
the broker's settings and the environment (``setup_digest``): a host inherits the environment
of the agent that started it, so only agents whose Lean would see the same variables share it.
``<name>.lock`` beside it is held with an exclusive ``flock`` by the live host for its whole
life, ``<name>.log`` takes its stderr and ``<name>.versions`` keeps the document versions it
issued. The directory is ``$XDG_RUNTIME_DIR/lean-beam``
when that variable is set, else ``hosts`` under the user cache dir of ``beam``; it is made
with mode 0700 and refused when it belongs to another user or others may write to it
(docs/HOST.md, "The socket").
"""

from __future__ import annotations

import os
import stat
from typing import NamedTuple

SOCKET_SUFFIX = ".sock"
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes; stay well inside


class Unavailable(Exception):
    """No host can be used here; ``reason`` is a short code, the message says why."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def socket_dir() -> str:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "lean-beam")
    import platformdirs

    return os.path.join(platformdirs.user_cache_dir("beam"), "hosts")


def prepare_dir(path: str) -> None:
    """Makes the socket directory (0700) and checks it is ours alone; ``Unavailable`` if not."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError as error:
        raise Unavailable(
            "socketDirUnusable",
            f"cannot create the host socket directory {path}: {error.strerror or error}",
        ) from None
    if not stat.S_ISDIR(info.st_mode):
        raise Unavailable("socketDirUnusable", f"{path} is not a directory")
    if info.st_uid != os.getuid():
        raise Unavailable("socketDirUnusable", f"{path} belongs to another user")
    if info.st_mode & 0o077:
        try:
            os.chmod(path, 0o700)
        except OSError as error:
            raise Unavailable(
                "socketDirUnusable", f"{path} is open to other users: {error.strerror}"
            ) from None


class Place(NamedTuple):
    """One host's files."""

    directory: str
    name: str

    @property
    def socket(self) -> str:
        return os.path.join(self.directory, self.name + SOCKET_SUFFIX)

    @property
    def lock(self) -> str:
        return os.path.join(self.directory, self.name + ".lock")

    @property
    def log(self) -> str:
        return os.path.join(self.directory, self.name + ".log")

    @property
    def versions(self) -> str:
        """The document versions the host issued, so a new host never issues one again."""
        return os.path.join(self.directory, self.name + ".versions")


def place_of(root: str, toolchain: str, runtime_id: str, launch: str) -> Place:
    """Where the host of this workspace lives; ``Unavailable`` when the path is too long."""
    found = Place(socket_dir(), short_digest("\0".join((root, toolchain, runtime_id, launch))))
    if len(os.fsencode(found.socket)) > MAX_SOCKET_PATH:
        raise Unavailable(
            "socketPathTooLong",
            f"the host socket path {found.socket} is longer than {MAX_SOCKET_PATH} bytes",
        )
    return found


# Variables that differ between processes of one user without changing what Lean does.
VOLATILE = frozenset(
    {
        "_",
        "PWD",
        "OLDPWD",
        "SHLVL",
        "TERM",
        "COLORTERM",
        "TERM_PROGRAM",
        "TERM_PROGRAM_VERSION",
        "TERM_SESSION_ID",
        "WINDOWID",
        "SSH_TTY",
        "SSH_CLIENT",
        "SSH_CONNECTION",
        "SSH_AUTH_SOCK",
        "LS_COLORS",
        "PS1",
    }
)


def setup_digest(settings: str, env: dict[str, str]) -> str:
    """A digest of the broker's settings (any text) and the environment Lean would inherit."""
    kept = sorted((k, v) for k, v in env.items() if k not in VOLATILE)
    return short_digest(settings + "\0" + "\0".join(f"{k}={v}" for k, v in kept))


def short_digest(text: str) -> str:
    """16 hex digits of the 64-bit FNV-1a hash of ``text``: a name, not a secret (hashlib
    would load OpenSSL on the first Lean call for nothing)."""
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def socket_dirs() -> list[str]:
    """Where this user's hosts may live: ``socket_dir()`` and, when ``XDG_RUNTIME_DIR`` is set,
    the cache directory too (MCP clients often start servers without that variable)."""
    found = [socket_dir()]
    if os.environ.get("XDG_RUNTIME_DIR"):
        import platformdirs

        found.append(os.path.join(platformdirs.user_cache_dir("beam"), "hosts"))
    return found


def sockets(directory: str | None = None) -> list[str]:
    """Every host socket file in the directory (default: every one of ``socket_dirs``)."""
    found = []
    for where in [directory] if directory else socket_dirs():
        try:
            names = os.listdir(where)
        except OSError:
            continue
        found += [os.path.join(where, n) for n in names if n.endswith(SOCKET_SUFFIX)]
    return sorted(found)


def runtime_id() -> str:
    """The id of the runtime this code belongs to; development code gets one from its place."""
    from beam_runtime import identity
    from beam_runtime.version import VERSION

    found = identity.code_runtime_dir()
    if found is not None:
        return os.path.basename(found)
    here = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    return "dev-" + short_digest(f"{VERSION}\0{here}")[:12]
