"""`lean-beam doctor`: what is installed, what is broken, and the command that fixes each problem.

Sections: this process, the install root (marker, allowed entries, `current`, wrappers), every
runtime (validity, interpreter, leases), MCP client registrations, the Lean toolchain of the
project in the current directory, a live MCP round trip through `<root>/bin/lean-beam-mcp`
run with only the variables MCP clients pass, and one through each registration's
own command, spoken as its client speaks (`--client NAME`: only that client's, without the
wrapper's self-check, plus the client's trust and approval gates). An interrupted
`lean-beam setup` is rolled back first. "Everything works" needs a Lean toolchain.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from beam_runtime.errors import BeamError
from beam_runtime.layout import COMMANDS, bin_dir, leases_dir, versions_dir
from beam_runtime.record_check import full_problem
from beam_runtime.toolchain import run_captured

CLIENT_ENV_KEYS = ("HOME", "PATH", "USER", "SHELL", "TERM", "LOGNAME")
SELF_CHECK_TIMEOUT_VAR = "BEAM_DOCTOR_SELF_CHECK_TIMEOUT_S"
# The self-check bounds each phase (30 s); this bounds the whole run.
SELF_CHECK_TIMEOUT_S = 150.0
ROUND_TRIP_TIMEOUT_VAR = "BEAM_DOCTOR_ROUND_TRIP_TIMEOUT_S"
ROUND_TRIP_TIMEOUT_S = 30.0
ELAN_INSTALL_COMMAND = (
    "curl https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh -sSf | sh"
)
WRAPPER_MARK = "# managed-by: lean-beam"
OK, INFO, WARN, FAIL = "ok", "info", "warn", "fail"


@dataclass
class Check:
    section: str
    name: str
    status: str
    detail: str
    fix: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "name": self.name,
            "status": self.status,
            "detail": self.detail,
            "fix": self.fix,
        }


@dataclass
class DoctorReport:
    install_root: Path | None
    checks: list[Check] = field(default_factory=list)
    lean_found: bool = False  # `lake` was found: only then is "everything works" said

    def add(self, *args: Any, **kwargs: Any) -> None:
        self.checks.append(Check(*args, **kwargs))

    def count(self, status: str) -> int:
        return sum(1 for check in self.checks if check.status == status)

    @property
    def ok(self) -> bool:
        return self.count(FAIL) == 0

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "install_root": str(self.install_root) if self.install_root else None,
            "failures": self.count(FAIL),
            "warnings": self.count(WARN),
            "lean_found": self.lean_found,
            "verdict": self.verdict(),
            "checks": [check.to_json() for check in self.checks],
        }

    def to_text(self) -> str:
        lines: list[str] = []
        section = None
        for check in self.checks:
            if check.section != section:
                section = check.section
                lines.append(section)
            lines.append(f"  {check.status.upper():<5} {check.name}: {check.detail}")
            if check.fix and check.status in (WARN, FAIL):
                lines.append(f"        fix: {check.fix}")
        lines.append(f"{self.verdict()}, {self.count(WARN)} warning(s)")
        return "\n".join(lines)

    def verdict(self) -> str:
        if not self.ok:
            return f"{self.count(FAIL)} problem(s)"
        if self.lean_found:
            return "everything works"
        return (
            "the lean-beam MCP server works; no Lean toolchain was found, so install elan "
            f"before real use: {ELAN_INSTALL_COMMAND}"
        )


def q(path: object) -> str:
    return shlex.quote(str(path))


# ---- this process -------------------------------------------------------------------------


def check_process(report: DoctorReport) -> None:
    from beam_runtime.identity import runtime_identity

    identity = runtime_identity("lean-beam")
    if "runtime_id" in identity:
        detail = f"{identity['version']} from runtime {identity['runtime_id']}"
    else:
        detail = f"{identity['version']}, development copy ({identity['python']})"
    report.add("lean-beam", "this process", INFO, detail)


# ---- install root -------------------------------------------------------------------------


def check_install_root(report: DoctorReport, root: Path) -> bool:
    """Marker and allowed entries; False when the rest of the install checks make no sense."""
    from beam_install.root import inspect_root

    section = "install root"
    if not root.exists():
        report.add(
            section, "root", FAIL, f"{root} does not exist (not installed)", "lean-beam install"
        )
        return False
    try:
        claimed = inspect_root(root)
    except BeamError as error:
        report.add(section, "root", FAIL, error.message, error.fix)
        return False
    if not claimed:
        report.add(section, "marker", FAIL, f"{root} has no lean-beam marker", "lean-beam install")
        return False
    report.add(section, "marker", OK, f"{root} is a lean-beam install root")
    return True


def check_current(report: DoctorReport, root: Path) -> str | None:
    from beam_runtime.listing import current_runtime_id

    current = current_runtime_id(root)
    if current is None:
        link = root / "current"
        what = f"points at {os.readlink(link)}" if link.is_symlink() else "is missing"
        report.add("install root", "current", FAIL, f"{link} {what}", "lean-beam install")
    else:
        report.add("install root", "current", OK, f"runtime {current}")
    return current


def check_wrappers(report: DoctorReport, root: Path) -> None:
    for command in COMMANDS:
        path = bin_dir(root) / command
        problem = None
        if path.is_symlink() or not path.is_file():
            problem = "is missing"
        elif not os.access(path, os.X_OK):
            problem = "is not executable"
        elif WRAPPER_MARK not in path.read_text(encoding="utf-8", errors="replace"):
            problem = "is not managed by lean-beam"
        if problem:
            report.add(
                "install root", command, FAIL, f"wrapper {path} {problem}", "lean-beam install"
            )
        else:
            report.add("install root", command, OK, f"wrapper {path}")


# ---- runtimes -----------------------------------------------------------------------------


def check_runtimes(report: DoctorReport, root: Path, current: str | None, index: Any) -> None:
    from beam_runtime.listing import annotate, scan_runtimes

    entries = annotate(root, scan_runtimes(root), index)
    if not entries:
        report.add(
            "runtimes",
            "versions",
            FAIL,
            f"{versions_dir(root)} has no runtime",
            "lean-beam install",
        )
    for entry in entries:
        try:
            invalid = entry.invalid if entry.manifest is None else full_problem(Path(entry.path))
        except OSError as exc:  # a file vanished or cannot be read midway
            invalid = f"cannot be checked: {exc}"
        if invalid is not None and _moved_meanwhile(entry):
            report.add(
                "runtimes",
                entry.name,
                INFO,
                "removed or replaced while doctor was checking it (a prune or an install ran)",
            )
            continue
        if invalid is not None:  # the same full check install makes before reusing a runtime
            aside = Path.home() / f"lean-beam-aside-{entry.name}"
            report.add(
                "runtimes",
                entry.name,
                FAIL,
                f"invalid: {invalid}",
                f"mv {q(entry.path)} {q(aside)}",
            )
            continue
        assert entry.manifest is not None
        python = entry.manifest.python
        flags = ", ".join(entry.holders()) or "unused"
        interpreter = Path(python["executable"])
        if interpreter.is_file() and os.access(interpreter, os.X_OK):
            report.add(
                "runtimes", entry.name, OK, f"{flags}; Python {python['version']} at {interpreter}"
            )
        else:
            fix = (
                "reinstall lean-beam with a working Python, then `lean-beam install`"
                if entry.name == current
                else "lean-beam runtime prune --yes"
            )
            report.add(
                "runtimes", entry.name, FAIL, f"{flags}; its interpreter {interpreter} is gone", fix
            )
        check_nix_gcroot(report, root, entry.name, str(interpreter))
        if entry.active and entry.name != current:
            report.add(
                "runtimes",
                f"{entry.name} lease",
                WARN,
                "processes still run this older runtime",
                "restart the MCP clients (agents) to move them to the current runtime",
            )
    check_stale_leases(report, root, {e.name for e in entries})


def _moved_meanwhile(entry: Any) -> bool:
    """Whether `versions/<id>` is gone or another directory now: prune renames a runtime out
    of `versions/` in one step, so a runtime that vanished mid-check was removed, not broken."""
    try:
        info = os.lstat(entry.path)
    except FileNotFoundError:
        return True
    return entry.inode is not None and (info.st_dev, info.st_ino) != tuple(entry.inode)


def check_nix_gcroot(report: DoctorReport, root: Path, name: str, interpreter: str) -> None:
    """A runtime on a /nix/store interpreter needs `state/gcroots/<id>` (docs/INSTALL.md)."""
    from beam_runtime.layout import gcroots_dir

    if not interpreter.startswith("/nix/store/"):
        return
    gcroot = gcroots_dir(root) / name
    if os.path.islink(gcroot) and os.path.exists(gcroot):
        report.add("runtimes", f"{name} gc root", OK, f"{gcroot} -> {os.readlink(gcroot)}")
        return
    report.add(
        "runtimes",
        f"{name} gc root",
        WARN,
        f"no Nix GC root at {gcroot}: nix-collect-garbage may delete the interpreter "
        "and the libraries this runtime links against",
        "rerun `lean-beam install` from the Nix package (with nix-store on PATH)",
    )


def check_stale_leases(report: DoctorReport, root: Path, names: set[str]) -> None:
    try:
        leases = sorted(os.listdir(leases_dir(root)))
    except FileNotFoundError:
        return
    stale = [n for n in leases if n.endswith(".lease") and n[: -len(".lease")] not in names]
    if stale:
        report.add(
            "runtimes",
            "leases",
            INFO,
            f"lease files without a runtime (harmless): {', '.join(stale)}",
        )


# ---- registrations ------------------------------------------------------------------------


def register_fix(client: str, name: str, config: Path, wrapper: Path) -> str:
    """The command (or edit) that points a registration at the stable wrapper."""
    plain = name.split(" (project ")[0]
    if client == "codex":
        return f"codex mcp remove {q(plain)} && codex mcp add {q(plain)} -- {q(wrapper)}"
    if client == "claude-code" and plain == name:
        return (
            f"claude mcp remove --scope user {q(plain)} && "
            f"claude mcp add --scope user {q(plain)} -- {q(wrapper)}"
        )
    return f"edit {config}: make server {name!r} run {wrapper}"


def _is_beam_server(entry: Any, root: Path) -> bool:
    strings = entry.strings()
    if entry.command and os.path.basename(entry.command[0]) == "lean-beam-mcp":
        return True
    prefixes = (str(root) + os.sep, os.path.realpath(root) + os.sep)
    return any(s.startswith(prefixes) or any(p in s for p in prefixes) for s in strings)


def check_registrations(
    report: DoctorReport, root: Path, index: Any, client: str | None = None
) -> list[Any]:
    """Each registration that runs lean-beam-mcp; returns them for the round trips."""
    from beam_runtime.references import referenced_ids

    wrapper = bin_dir(root) / "lean-beam-mcp"
    section = "mcp registrations"
    for problem in index.registrations.problems:
        config = problem.config
        if problem.text is None:
            keeps, fix = "every runtime until it can be read", f"make {config} readable"
        else:
            keeps, fix = "every runtime whose id appears in it", f"fix the syntax of {config}"
        report.add(
            section, f"{problem.client} config", WARN, f"{problem.error}; prune keeps {keeps}", fix
        )
    found = [e for e in index.registrations.entries if _is_beam_server(e, root)]
    if client is not None:
        found = [e for e in found if e.client == client]
    for entry in found:
        name = f"{entry.client}:{entry.server_name}"
        fix = register_fix(entry.client, entry.server_name, entry.config, wrapper)
        command = entry.command[0] if entry.command else ""
        ids = entry.ids if entry.ids is not None else referenced_ids(entry.strings(), root)
        if ids:
            missing = [i for i in sorted(ids) if not (versions_dir(root) / i).is_dir()]
            if missing:
                report.add(
                    section, name, FAIL, f"points into removed runtime(s) {', '.join(missing)}", fix
                )
            else:
                report.add(
                    section,
                    name,
                    WARN,
                    f"pinned to runtime {', '.join(sorted(ids))}; installs will not update it",
                    fix,
                )
        elif os.path.realpath(os.path.expanduser(command)) == os.path.realpath(wrapper):
            report.add(section, name, OK, f"runs {wrapper} ({entry.config})")
        else:
            report.add(section, name, WARN, f"runs {command}, not {wrapper}", fix)
    if not found and client is not None:
        report.add(
            section,
            client,
            FAIL,
            f"no {client} registration runs lean-beam-mcp",
            f"lean-beam setup {client} --yes",
        )
    elif not found:
        report.add(
            section,
            "clients",
            WARN,
            "no MCP client registration runs lean-beam-mcp",
            "lean-beam setup --yes (or name clients: lean-beam setup codex --yes)",
        )
    return found


def check_round_trips(
    report: DoctorReport, entries: list[Any], cwd: Path, env: Mapping[str, str]
) -> None:
    """Start each registered command exactly as stored, with the client's bare environment, in
    the directory the client starts it in, and speak to it as that client does."""
    from beam_install.clients import project_of
    from beam_install.clients.profiles import profile_for
    from beam_install.mcp_probe import round_trip
    from beam_runtime.toolchain import seconds_from_env

    timeout = seconds_from_env(env, ROUND_TRIP_TIMEOUT_VAR, ROUND_TRIP_TIMEOUT_S)
    done: dict[tuple[Any, ...], Any] = {}
    for entry in entries:
        name = f"launch {entry.client}:{entry.server_name}"
        if not entry.command:
            report.add(
                "mcp round trip",
                name,
                FAIL,
                "the registration has no command",
                f"lean-beam setup {entry.client} --yes --force-unmanaged",
            )
            continue
        child_env = {**client_env(env), **entry.env}
        project = project_of(entry.client, entry.config, entry.server_name, env)
        start_in = project if project is not None and project.is_dir() else cwd
        key = (entry.client, tuple(entry.command), tuple(sorted(child_env.items())), start_in)
        if key not in done:
            profile = profile_for(entry.client)
            done[key] = round_trip(entry.command, child_env, str(start_in), timeout, profile)
        outcome = done[key]
        argv = " ".join(q(a) for a in entry.command)
        if outcome.ok:
            report.add("mcp round trip", name, OK, f"{argv}: {outcome.detail}")
        elif outcome.rejected:
            report.add(
                "mcp round trip",
                name,
                FAIL,
                f"{argv}: {outcome.detail}",
                f"run `lean-beam install` (a current lean-beam answers the revision the client "
                f"asks for), then `lean-beam setup {entry.client} --refresh --yes` and restart "
                "the client",
            )
        else:
            report.add(
                "mcp round trip",
                name,
                FAIL,
                f"{argv}: {outcome.detail}",
                f"lean-beam setup {entry.client} --refresh --yes, or fix {entry.config}",
            )


def check_gates(
    report: DoctorReport, client: str, entries: list[Any], cwd: Path, env: Mapping[str, str]
) -> None:
    """The client's trust and approval state for these registrations (warnings with fixes)."""
    from beam_install.clients.gates import gates

    for gate in gates(client, entries, cwd, env):
        report.add("client trust", gate.name, OK if gate.ok else WARN, gate.detail, gate.fix)


def check_setup_journal(report: DoctorReport, root: Path) -> None:
    """Roll back a setup that was killed midway, unless one is running now."""
    from beam_install.journal import journal_path, recover, setup_lock

    if not journal_path(root).exists():
        return
    try:
        with setup_lock(root, timeout=0):
            recovery = recover(root)
    except BeamError as error:
        report.add("mcp registrations", "setup journal", WARN, error.message, error.fix)
        return
    if recovery is not None:
        status = WARN if recovery.conflicts else INFO
        report.add(
            "mcp registrations",
            "setup journal",
            status,
            recovery.to_text().replace("\n", "; "),
            "check the files named as left alone" if recovery.conflicts else None,
        )


# ---- Lean toolchain -----------------------------------------------------------------------


def check_toolchain(report: DoctorReport, cwd: Path, env: Mapping[str, str]) -> None:
    from beam_runtime import toolchain as tc

    section = "lean toolchain"
    project = tc.find_project_root(cwd)
    elan = tc.find_tool("elan", env)
    lake = tc.find_tool("lake", env)
    need = FAIL if project else WARN
    if elan:
        report.add(section, "elan", OK, str(elan))
    else:
        report.add(section, "elan", WARN if lake else need, "elan not found", tc.ELAN_INSTALL_FIX)
    report.lean_found = lake is not None
    if lake:
        report.add(section, "lake", OK, str(lake))
    else:
        report.add(section, "lake", need, "lake not found", tc.ELAN_INSTALL_FIX)
    if project is None:
        report.add(
            section,
            "project",
            INFO,
            f"no Lean project at or above {cwd}; run doctor inside one to check it",
        )
        return
    report.add(section, "project", OK, str(project))
    try:
        spec = tc.classify_toolchain(tc.read_toolchain_file(project))
    except BeamError as error:
        report.add(section, "lean-toolchain", FAIL, error.message, error.fix)
        return
    status = WARN if spec.warning else OK
    report.add(
        section,
        "lean-toolchain",
        status,
        spec.warning or spec.spec,
        "pin a release (leanprover/lean4:vX.Y.Z) to get the supported-floor check"
        if spec.warning
        else None,
    )
    if lake:
        probe(report, "lake --version", [str(lake), "--version"], project, env)
    if elan:
        probe(report, "elan show", [str(elan), "show"], project, env, failure=WARN)


def probe(
    report: DoctorReport,
    name: str,
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str],
    failure: str = FAIL,
) -> None:
    from beam_runtime.toolchain import probe_timeout, run_probe

    try:
        output = run_probe(argv, cwd, env, probe_timeout(env))
    except BeamError as error:
        report.add("lean toolchain", name, failure, error.message, error.fix)
        return
    lines = [line for line in output.splitlines() if line.strip()]
    # `lake --version` says it on its first line; `elan show` ends with the active toolchain
    shown = (lines[0] if name.startswith("lake") else lines[-1]) if lines else "(no output)"
    report.add("lean toolchain", name, OK, shown)


# ---- live MCP round trip ------------------------------------------------------------------


def client_env(env: Mapping[str, str]) -> dict[str, str]:
    return {key: env[key] for key in CLIENT_ENV_KEYS if key in env}


def check_mcp(report: DoctorReport, root: Path, cwd: Path, env: Mapping[str, str]) -> None:
    wrapper = bin_dir(root) / "lean-beam-mcp"
    section = "mcp round trip"
    fix = f"run `{wrapper} --self-check` to see the whole output, then `lean-beam install`"
    if not os.access(wrapper, os.X_OK):
        report.add(section, "self-check", FAIL, f"{wrapper} is missing", "lean-beam install")
        return
    timeout = _self_check_timeout(env)
    try:
        done = run_captured([str(wrapper), "--self-check"], cwd, client_env(env), timeout)
    except subprocess.TimeoutExpired:
        report.add(section, "self-check", FAIL, f"no answer within {timeout:g} s", fix)
        return
    except OSError as exc:
        report.add(section, "self-check", FAIL, f"cannot start {wrapper}: {exc}", fix)
        return
    tail = (done.stdout.strip() + "\n" + done.stderr.strip()).strip().splitlines()[-5:]
    if done.returncode == 0:
        report.add(
            section,
            "self-check",
            OK,
            f"{wrapper} answered with only {', '.join(CLIENT_ENV_KEYS)} set",
        )
    else:
        report.add(
            section,
            "self-check",
            FAIL,
            f"{wrapper} --self-check exited {done.returncode}: " + " | ".join(tail),
            fix,
        )


def _self_check_timeout(env: Mapping[str, str]) -> float:
    from beam_runtime.toolchain import seconds_from_env

    return seconds_from_env(env, SELF_CHECK_TIMEOUT_VAR, SELF_CHECK_TIMEOUT_S)


# ---- shared Lean hosts ---------------------------------------------------------------------


def check_hosts(report: DoctorReport) -> None:
    """Lists the live shared Lean hosts and what their Lean processes hold (information)."""
    from beam_runtime.host.listing import live_hosts, mib

    hosts = live_hosts()
    if not hosts:
        report.add("shared Lean hosts", "hosts", INFO, "none running")
        return
    total = sum(int(host["pss_bytes"] or 0) for host in hosts)
    report.add(
        "shared Lean hosts",
        "hosts",
        INFO,
        f"{len(hosts)} running, their Lean processes hold {mib(total)} (PSS)",
    )
    for host in hosts:
        report.add(
            "shared Lean hosts",
            str(host["root"]),
            INFO,
            f"pid {host['pid']}, runtime {host['runtime_id']}, {host['connections']} agent(s), "
            f"{host['lean_processes']} Lean process(es), {mib(host['pss_bytes'])}",
        )


# ---- all together -------------------------------------------------------------------------


def _projects_here(cwd: Path) -> list[Path]:
    """The project doctor runs in, whose own client files it reads too: the Lean project at
    or above `cwd`, else `cwd` itself."""
    from beam_runtime.toolchain import find_project_root

    try:
        project = find_project_root(cwd)
    except OSError:
        project = None
    return [project or cwd]


def run_doctor(
    explicit_root: str | None, *, cwd: Path, env: Mapping[str, str], client: str | None = None
) -> DoctorReport:
    from beam_runtime.layout import resolve_install_root
    from beam_runtime.references import ReferenceIndex

    report = DoctorReport(None)
    check_process(report)
    try:
        root = resolve_install_root(explicit_root)
    except BeamError as error:
        report.add("install root", "root", FAIL, error.message, error.fix)
        check_toolchain(report, cwd, env)
        check_hosts(report)
        return report
    report.install_root = root
    installed = check_install_root(report, root)
    if installed:
        current = check_current(report, root)
        check_wrappers(report, root)
        check_setup_journal(report, root)
        index = ReferenceIndex.scan(root, env, _projects_here(cwd))
        check_runtimes(report, root, current, index)
        registered = check_registrations(report, root, index, client)
    check_toolchain(report, cwd, env)
    if installed:
        if client is None:
            check_mcp(report, root, cwd, env)
        check_round_trips(report, registered, cwd, env)
        if client is not None:
            check_gates(report, client, registered, cwd, env)
    check_hosts(report)
    return report
