"""The second mutant list of `bench/mutation.py` (`--list second`).

Written from the product code alone, without reading any test: for each safety check a demanding
user relies on, one one-line weakening (a condition deleted, a comparison flipped, a check
widened, a lock dropped). `tests` names only the test directory of the mutant's area; with
`--select coverage` the tests that actually run the mutated line are used instead, and these
directories are the fallback when no test covered it.
"""

# ruff: noqa: E501  (the table quotes source lines verbatim)
from __future__ import annotations

from mutation import Mutant  # bench/ is on sys.path when mutation.py runs as a script

INSTALL, RUNTIME, SETUP = ("tests/install",), ("tests/runtime",), ("tests/setup",)
BROKER, MCP, VERIFY = ("tests/broker",), ("tests/mcp",), ("tests/verify",)
SPECULATIVE, HARDENING = ("tests/speculative",), ("tests/hardening",)
REDACT = ("tests/hardening", "tests/agent")
ROOTS = ("tests/install", "tests/runtime")

IR, RC, ROOT = (
    "beam_runtime/install_root.py",
    "beam_runtime/record_check.py",
    "beam_install/root.py",
)
PR, CL, IN = "beam_install/prune.py", "beam_install/cleanup.py", "beam_install/install.py"
LK, LE, LA = "beam_install/lock.py", "beam_runtime/leases.py", "beam_runtime/launcher.py"
RF, UN, WR = "beam_runtime/references.py", "beam_install/uninstall.py", "beam_install/wrappers.py"
SE, PL, RM = "beam_install/setup.py", "beam_install/plan.py", "beam_install/remove.py"
FO, JE, JO = (
    "beam_install/clients/formats.py",
    "beam_install/clients/jsonedit.py",
    "beam_install/journal.py",
)
PA, WS = "beam_runtime/broker/session/paths.py", "beam_mcp/workspace.py"
HA = "beam_runtime/broker/speculation/handles.py"
VE, RE, AX = (
    "beam_runtime/broker/verify/verify.py",
    "beam_runtime/broker/verify/receipt.py",
    "beam_runtime/broker/verify/axioms.py",
)
PC, CH = "beam_runtime/broker/verify/policy.py", "beam_runtime/broker/verify/checks.py"
RD, BU, WI = "beam_runtime/broker/feedback/redact.py", "beam_mcp/budget.py", "beam_mcp/wire.py"
RO, SR = "beam_mcp/router.py", "beam_runtime/safe_read.py"
PO, GO = "beam_runtime/broker/queries/positions.py", "beam_runtime/broker/queries/goals.py"
ST, PY = "beam_install/staging.py", "beam_install/payload.py"

SECOND: list[Mutant] = [
    # --- the install root: `current`, runtime directories, marker, manifest ---
    Mutant(
        "install_root",
        IR,
        'if head != "versions" or not sep or not valid_runtime_id(name):',
        "if not sep or not valid_runtime_id(name):",
        ROOTS,
    ),
    Mutant(
        "install_root",
        IR,
        "if os.path.islink(runtime) or not os.path.isdir(runtime):",
        "if not os.path.isdir(runtime):",
        ROOTS,
    ),
    Mutant(
        "install_root",
        IR,
        "if os.path.islink(path) or not os.path.isfile(path):",
        "if not os.path.isfile(path):",
        ROOTS,
    ),
    Mutant(
        "install_root",
        IR,
        'return 0 < len(name) <= 200 and name[0] != "." and _ID_CHARS.issuperset(name)',
        "return 0 < len(name) <= 200 and _ID_CHARS.issuperset(name)",
        ROOTS,
    ),
    Mutant(
        "install_root",
        RC,
        '        if not stat.S_ISREG(info.st_mode):\n            return "", 0, 0,',
        '        if False:\n            return "", 0, 0,',
        ROOTS,
    ),
    # --- install: reuse only a fully valid runtime, re-check under the lock ---
    Mutant("install", IN, "    problem = full_problem(runtime)", "    problem = None", INSTALL),
    Mutant(
        "install",
        RC,
        "    return _bytecode_problem(runtime_dir, manifest)",
        "    return None",
        INSTALL,
    ),
    Mutant("install", LK, "        lock.acquire()", "        pass", INSTALL),
    # --- prune: plan, lease, re-checks, lock ---
    Mutant("prune", PR, "        if entry.manifest is None:", "        if False:", RUNTIME),
    Mutant("prune", PR, "    if fresh.inode != entry.inode:", "    if False:", RUNTIME),
    Mutant("prune", PR, "    if current_runtime_id(root) == entry.name:", "    if False:", RUNTIME),
    Mutant("prune", PR, "        if not exclusive:", "        if False:", RUNTIME),
    Mutant(
        "prune",
        PR,
        '    with install_lock(root, timeout=timeout, command="lean-beam runtime prune"):',
        "    with suppress():",
        RUNTIME,
    ),
    # --- cleanup never follows a link out of the tree it deletes ---
    Mutant(
        "cleanup",
        CL,
        "    if path.is_symlink() or not path.is_dir():",
        "    if not path.is_dir():",
        ROOTS,
    ),
    Mutant(
        "cleanup", CL, "            if not os.path.islink(child):", "            if True:", ROOTS
    ),
    # --- leases: a process never runs on a runtime being removed ---
    Mutant(
        "leases",
        LE,
        "        if not _published(root, runtime_id):\n            os.close(fd)",
        "        if False:\n            os.close(fd)",
        ROOTS,
    ),
    Mutant(
        "leases",
        LE,
        "    except BlockingIOError:\n        return True",
        "    except BlockingIOError:\n        return False",
        ROOTS,
    ),
    Mutant(
        "leases",
        LA,
        "        acquire_shared(root, os.path.basename(runtime_dir))",
        "        pass",
        ROOTS,
    ),
    # --- references: what keeps a runtime from being pruned ---
    Mutant(
        "references",
        RF,
        "        return self.text is None or runtime_id in self.text",
        "        return self.text is None",
        RUNTIME,
    ),
    Mutant(
        "references",
        RF,
        "        return [*self.command, *self.env_values]",
        "        return [*self.command]",
        RUNTIME,
    ),
    Mutant(
        "references", RF, "            head = os.path.expanduser(head)", "            pass", RUNTIME
    ),
    # --- setup: never overwrite what the user owns ---
    Mutant("setup", SE, "    elif request.force_unmanaged:", "    elif True:", SETUP),
    Mutant(
        "setup",
        SE,
        '    if not skill_is_ours(old):\n        if refresh_only:\n            return None\n        return SkillChange(host, path, "skipped"',
        '    if False:\n        if refresh_only:\n            return None\n        return SkillChange(host, path, "skipped"',
        SETUP,
    ),
    Mutant(
        "setup",
        PL,
        "    if not argv:\n        return False",
        "    if not argv:\n        return True",
        SETUP,
    ),
    Mutant(
        "setup",
        FO,
        "        env = {**self.env_of(old), **new[self.env_key]}",
        "        env = dict(new[self.env_key])",
        SETUP,
    ),
    Mutant(
        "setup",
        FO,
        '        if servers is not None and not isinstance(servers, dict):\n            raise ValueError("`mcp_servers` is not a table")',
        '        if False:\n            raise ValueError("`mcp_servers` is not a table")',
        SETUP,
    ),
    # --- remove / uninstall: only ours goes ---
    Mutant(
        "remove",
        RM,
        '    if not entry_is_ours(fmt, entry, bin_dir(root) / "lean-beam-mcp", root):',
        "    if False:",
        SETUP,
    ),
    Mutant(
        "remove",
        RM,
        "    if created and _is_empty(fmt.parse(structural)):",
        "    if created:",
        SETUP,
    ),
    Mutant("remove", RM, "    if not skill_is_ours(current.text):", "    if False:", SETUP),
    Mutant(
        "remove",
        RM,
        "    still = {skill_host(r.client) for r in remaining}",
        "    still: set[str] = set()",
        SETUP,
    ),
    Mutant("remove", JE, "        if len(members) > 1:", "        if False:", SETUP),
    Mutant(
        "uninstall",
        UN,
        "        if link.is_symlink() and (",
        "        if link.is_symlink() or (",
        SETUP + RUNTIME,
    ),
    Mutant(
        "uninstall",
        WR,
        "        elif path.is_symlink() and _points_at(path, wrapper):",
        "        elif path.is_symlink():",
        INSTALL,
    ),
    # --- the setup journal: private, locked, never clobbers a later change ---
    Mutant("journal", JO, "NEW_FILE_MODE = 0o600", "NEW_FILE_MODE = 0o644", SETUP),
    Mutant("journal", JO, "        lock.acquire()", "        pass", SETUP),
    Mutant("journal", JO, '    if now != item["new_sha256"]:', "    if False:", SETUP),
    # --- wrappers and launchers run the interpreter and root they name ---
    Mutant(
        "wrappers", WR, "    quoted = shlex.quote(str(root))", "    quoted = str(root)", INSTALL
    ),
    Mutant(
        "wrappers", PY, "f'exec {shlex.quote(python)} -I -S -B", "f'exec {python} -I -S -B", INSTALL
    ),
    # --- path resolution and workspace roots ---
    Mutant(
        "paths",
        PA,
        "if candidate != root and not candidate.startswith(root.rstrip(os.sep) + os.sep):",
        "if candidate != root and not candidate.startswith(root.rstrip(os.sep)):",
        BROKER,
    ),
    Mutant(
        "paths",
        WS,
        "    if not any(os.path.isfile(os.path.join(name, m)) for m in PROJECT_MARKERS):",
        "    if False:",
        MCP,
    ),
    # --- handles ---
    Mutant(
        "handles", HA, "        if record.abs_path != abs_path:", "        if False:", SPECULATIVE
    ),
    Mutant(
        "handles",
        HA,
        "        if record.root != root:\n            raise _foreign(handle_id)\n        if record.abs_path",
        "        if False:\n            raise _foreign(handle_id)\n        if record.abs_path",
        SPECULATIVE,
    ),
    # --- lean_verify: ok, flags, receipts ---
    Mutant(
        "verify",
        VE,
        '    clean = clean and all(m["built"] and not m["errors"] for m in modules)',
        '    clean = clean and all(not m["errors"] for m in modules)',
        VERIFY,
        equivalent="_modules marks every listed module built after a finished build that exited "
        "0, unless Lake printed error lines for it; any other build fails clean by its exit code",
    ),
    Mutant(
        "verify",
        VE,
        '        "ok": complete and clean and not flagged and not changed and not nothing,',
        '        "ok": complete and clean and not flagged and not nothing,',
        VERIFY,
    ),
    Mutant(
        "verify",
        VE,
        '"receipt": rc.make(plan.subject, outcome, plan.key) if complete and not changed else None,',
        '"receipt": rc.make(plan.subject, outcome, plan.key) if complete else None,',
        VERIFY,
    ),
    Mutant("verify", PC, "        if axiom in self.allowed_axioms:", "        if True:", VERIFY),
    Mutant(
        "verify",
        CH,
        "    return suffix[0] if len(suffix) == 1 else (None, name)",
        "    return suffix[0] if suffix else (None, name)",
        VERIFY,
    ),
    Mutant(
        "verify",
        RE,
        "    return Check(not mismatch and not stale, stale, mismatch)",
        "    return Check(not stale, stale, mismatch)",
        VERIFY,
    ),
    Mutant(
        "verify",
        RE,
        "        for module in before.keys() | subject.sources.keys()",
        "        for module in before.keys()",
        VERIFY,
    ),
    # --- redaction ---
    Mutant(
        "redact", RD, '    rf"(?im)^(\\s*-?\\s*{_NAME})', '    rf"(?i)^(\\s*-?\\s*{_NAME})', REDACT
    ),
    # --- result budget and the wire ---
    Mutant(
        "budget",
        BU,
        "            if key in _WHOLE and isinstance(value, str):",
        "            if False:",
        MCP,
    ),
    Mutant(
        "budget",
        WI,
        '    return len(text.encode("utf-8", "surrogatepass"))',
        "    return len(text)",
        MCP,
    ),
    Mutant("wire", WI, "    if has_id and rid is None:", "    if False:", MCP),
    Mutant(
        "router",
        RO,
        "        if key in self.active:\n            return None",
        "        if False:\n            return None",
        MCP,
    ),
    Mutant(
        "router", RO, "        if state.lifecycle is Lifecycle.FRESH:", "        if False:", MCP
    ),
    # --- bounded reads ---
    Mutant(
        "safe_read",
        SR,
        "        if not stat.S_ISREG(info.st_mode):\n            reason =",
        "        if stat.S_ISDIR(info.st_mode):\n            reason =",
        HARDENING,
    ),
    Mutant(
        "safe_read",
        SR,
        "    timer = loop.call_later(timeout, _settle, future)",
        "    timer = loop.call_later(timeout * 1000, _settle, future)",
        HARDENING,
    ),
    # --- positions and goals ---
    Mutant(  # positions by name are also the agent CLI's (tests/agent)
        "queries",
        PO,
        "    if len(chosen) == 1 or exact:",
        "    if chosen:",
        (*BROKER, "tests/agent"),
    ),
    Mutant(
        "queries",
        GO,
        "        if entries and (in_target or not _starts_entry(line)):",
        "        if entries and not _starts_entry(line):",
        BROKER,
    ),
    Mutant(
        "queries",
        GO,
        '            elif depth == 0 and word == ":=":',
        '            elif word == ":=":',
        BROKER,
    ),
]
