"""One-line weakenings of the safety checks that dedicated tests pin, each with the test that must
catch it (`python3 bench/mutation.py --list pins`). Written together with those tests: it shows
each test fails when its check is deleted or weakened; it is not a blind audit (that is the
second list, `mutants_second.py`)."""

# ruff: noqa: E501  (the table quotes source lines verbatim)
from __future__ import annotations

from mutation import Mutant

ROOT_PINS = "tests/runtime/test_root_pins.py"
IR = "beam_runtime/install_root.py"
RC = "beam_runtime/record_check.py"
UN = "beam_install/uninstall.py"
CL = "beam_install/cleanup.py"
RF = "beam_runtime/references.py"
PR = "beam_install/prune.py"


def _t(name: str) -> tuple[str, ...]:
    return (f"{ROOT_PINS}::{name}",)


PINS: list[Mutant] = [
    Mutant(
        "install_root",
        IR,
        'if head != "versions" or not sep or not valid_runtime_id(name):',
        "if not sep or not valid_runtime_id(name):",
        _t("test_current_must_read_exactly_versions_slash_id"),
    ),
    Mutant(
        "install_root",
        IR,
        'if head != "versions" or not sep or not valid_runtime_id(name):',
        'if head != "versions" or not sep:',
        _t("test_current_must_read_exactly_versions_slash_id"),
    ),
    Mutant(
        "install_root",
        IR,
        "        if os.path.islink(runtime) or not os.path.isdir(runtime):\n            return None\n        return runtime_id",
        "        if not os.path.isdir(runtime):\n            return None\n        return runtime_id",
        _t("test_a_runtime_directory_that_is_a_link_is_invalid_and_never_current"),
    ),
    Mutant(
        "record_check",
        RC,
        '    if runtime_dir.is_symlink() or not runtime_dir.is_dir():\n        return f"{runtime_dir} is not a real directory',
        '    if not runtime_dir.is_dir():\n        return f"{runtime_dir} is not a real directory',
        _t("test_a_runtime_directory_that_is_a_link_is_invalid_and_never_current"),
    ),
    Mutant(
        "record_check",
        RC,
        '        if not stat.S_ISREG(info.st_mode):\n            return "", 0, 0, f"{full} is not a regular file"',
        "        pass",
        _t("test_a_runtime_file_replaced_by_a_link_to_the_same_bytes_is_invalid"),
    ),
    Mutant(
        "record_check",
        RC,
        '            if not stat.S_ISREG(info.st_mode):\n                return "", f"{full} is not a regular file"',
        "            pass",
        _t("test_a_bytecode_file_replaced_by_a_link_is_invalid"),
    ),
    Mutant(
        "uninstall",
        UN,
        "os.readlink(link) == str(wrapper) or os.path.realpath(link) == os.path.realpath(wrapper)",
        "True",
        _t("test_uninstall_leaves_a_user_link_that_points_elsewhere"),
    ),
    Mutant(
        "cleanup",
        CL,
        "    if path.is_symlink() or not path.is_dir():\n        path.unlink(missing_ok=True)",
        "    if not path.is_dir():\n        path.unlink(missing_ok=True)",
        _t("test_cleanup_never_follows_a_link_out_of_the_tree_it_deletes"),
    ),
    Mutant(
        "cleanup",
        CL,
        "            if not os.path.islink(child):",
        "            if True:",
        _t("test_cleanup_never_follows_a_link_out_of_the_tree_it_deletes"),
    ),
    Mutant(
        "references",
        RF,
        "            real = os.path.realpath(os.path.expanduser(token))",
        "            real = os.path.realpath(token)",
        _t("test_a_tilde_command_through_a_link_into_versions_pins_its_runtime"),
    ),
    Mutant(
        "references",
        RF,
        '        if head.startswith("~"):\n            head = os.path.expanduser(head)',
        "        pass",
        _t("test_a_registered_command_spelled_with_a_tilde_pins_its_runtime"),
        equivalent="the same token also reaches _linked_ids, which expands it and finds the id",
    ),
    Mutant(
        "prune",
        PR,
        "        if entry.manifest is None:\n            plan.skipped.append",
        "        if False:\n            plan.skipped.append",
        _t("test_prune_plans_no_removal_of_a_runtime_whose_manifest_cannot_be_read"),
    ),
    Mutant(
        "prune",
        PR,
        '    with install_lock(root, timeout=timeout, command="lean-beam runtime prune"):',
        "    if True:",
        _t("test_prune_waits_for_the_install_lock_before_it_removes_anything"),
    ),
    Mutant(
        "record_check",
        RC,
        "    return _bytecode_problem(runtime_dir, manifest)",
        "    return None",
        _t("test_install_never_reuses_a_runtime_whose_bytecode_changed"),
    ),
    Mutant(
        "budget",
        "beam_mcp/wire.py",
        "and _utf8_size(text) > budget:",
        "and len(text) > budget:",
        ("tests/mcp/test_budget_pins.py::test_the_budget_counts_utf8_bytes_not_characters",),
    ),
    Mutant(
        "budget",
        "beam_mcp/wire.py",
        "lambda value: _utf8_size(_encode_text(value))",
        "lambda value: len(_encode_text(value))",
        ("tests/mcp/test_budget_pins.py::test_the_budget_counts_utf8_bytes_not_characters",),
    ),
    Mutant(
        "budget",
        "beam_mcp/budget.py",
        "            if key in _WHOLE and isinstance(value, str):\n                out[key] = value",
        "            if False:\n                out[key] = value",
        ("tests/mcp/test_budget_pins.py::test_a_path_is_never_cut_even_when_other_text_must_be",),
    ),
    Mutant(
        "positions",
        "beam_runtime/broker/queries/positions.py",
        "    if len(chosen) == 1 or exact:",
        "    if chosen:",
        (
            "tests/agent/test_positions.py::test_an_ambiguous_declaration_name_is_refused_not_guessed",
        ),
    ),
    Mutant(
        "goals",
        "beam_runtime/broker/queries/goals.py",
        "            if word in _OPENERS:\n                depth += 1",
        "            if word in _OPENERS:\n                pass",
        ("tests/broker/test_goal_pins.py",),
    ),
    Mutant(
        "goals",
        "beam_runtime/broker/queries/goals.py",
        "                depth = max(0, depth - 1)",
        "                pass",
        ("tests/broker/test_goal_pins.py",),
    ),
    Mutant(
        "goals",
        "beam_runtime/broker/queries/goals.py",
        "        if entries and (in_target or not _starts_entry(line)):",
        "        if entries and not _starts_entry(line):",
        ("tests/broker/test_goal_pins.py",),
    ),
    Mutant(
        "safe_read",
        "beam_runtime/safe_read.py",
        "    done.wait(timeout)",
        "    done.wait(timeout / 1000)",
        ("tests/hardening/test_safe_read.py::test_the_read_bound_is_in_seconds",),
    ),
    Mutant(
        "safe_read",
        "beam_runtime/safe_read.py",
        '    return value if 0 < value < float("inf") else default',
        '    return value * 1000 if 0 < value < float("inf") else default',
        ("tests/hardening/test_safe_read.py::test_the_read_bound_is_in_seconds",),
    ),
    Mutant(
        "safe_read",
        "beam_runtime/safe_read.py",
        "    return await call_async(partial(read_regular, path, cap), path, timeout)",
        "    return call_bounded(partial(read_regular, path, cap), path, timeout)",
        ("tests/hardening/test_safe_read.py::test_a_read_that_hangs_becomes_a_timeout",),
    ),
    Mutant(
        "barrier",
        "beam_runtime/broker/session/session.py",
        "            if remaining <= 0:\n                raise errors.timeout(",
        "            if remaining <= 0:\n                break\n                raise errors.timeout(",
        ("tests/broker/test_fake_lean.py",),
    ),
    Mutant(
        "barrier",
        "beam_runtime/broker/session/session.py",
        "            raise failure\n        return outcome",
        '            return "answered"\n        return outcome',
        ("tests/broker/test_fake_lean.py",),
    ),
    Mutant(
        "barrier",
        "beam_runtime/broker/session/session.py",
        "        if doc.crashed:\n            raise errors.worker_exited(",
        "        if False:\n            raise errors.worker_exited(",
        ("tests/broker/test_fake_lean.py",),
    ),
    Mutant(
        "handles",
        "beam_runtime/broker/speculation/handles.py",
        "        if record.abs_path != abs_path:",
        "        if False:",
        ("tests/speculative/test_handles.py", "tests/speculative/test_handle_workspaces.py"),
    ),
    Mutant(
        "handles",
        "beam_runtime/broker/speculation/handles.py",
        "            and (below_version is None or record.version < below_version)",
        "            and (below_version is None or record.version < 0)",
        ("tests/speculative/test_handles.py", "tests/speculative/test_handle_workspaces.py"),
    ),
    Mutant(
        "handles",
        "beam_runtime/broker/speculation/handles.py",
        "        if record.root != root:\n            raise _foreign(handle_id)",
        "        if False:\n            raise _foreign(handle_id)",
        ("tests/speculative/test_handles.py", "tests/speculative/test_handle_workspaces.py"),
    ),
    Mutant(
        "launcher",
        "beam_install/payload.py",
        "f'exec {shlex.quote(python)} -I",
        "f'exec {python} -I",
        ("tests/hardening/test_launcher_quoting.py",),
    ),
    Mutant(
        "redact",
        "beam_runtime/broker/feedback/redact.py",
        '    rf"(?im)^(\\s*-?\\s*{_NAME})',
        '    rf"(?i)^(\\s*-?\\s*{_NAME})',
        ("tests/hardening/test_redaction_pins.py",),
    ),
    Mutant(
        "install_root",
        IR,
        '    if os.path.islink(path) or not os.path.isfile(path):\n        return None, "not a regular file"',
        '    if not os.path.isfile(path):\n        return None, "not a regular file"',
        _t("test_a_marker_that_is_a_link_to_a_valid_marker_is_refused"),
    ),
]
