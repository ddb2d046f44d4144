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
SETUP_PINS = "tests/setup/test_setup_pins.py"
FM = "beam_install/clients/formats.py"
RM = "beam_install/remove.py"
JR = "beam_install/journal.py"
LB = "tests/broker/test_lean_behaviours.py"


def _t(name: str) -> tuple[str, ...]:
    return (f"{ROOT_PINS}::{name}",)


def _s(name: str) -> tuple[str, ...]:
    return (f"{SETUP_PINS}::{name}",)


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
        '            if not stat.S_ISREG(info.st_mode):\n                return [], f"{full} is not a regular file"',
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
        (f"{LB}::test_a_barrier_lean_keeps_dropping_ends_as_a_timeout",),
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
        "        if doc.crashed:\n            found = self._out_of_memory(doc)",
        "        if False:\n            found = self._out_of_memory(doc)",
        (f"{LB}::test_a_worker_that_crashed_before_the_barrier_is_a_crash",),
    ),
    Mutant(
        "handles",
        "beam_runtime/broker/speculation/handles.py",
        "        if record.abs_path != abs_path:",
        "        if False:",
        (
            "tests/speculative/test_handle_workspaces.py::test_handles_refuse_another_workspace_live_or_released",
            "tests/speculative/test_handles.py::test_unknown_foreign_and_mismatched_handles",
        ),
    ),
    Mutant(
        "handles",
        "beam_runtime/broker/speculation/handles.py",
        "            and (below_version is None or record.version < below_version)",
        "            and (below_version is None or record.version < 0)",
        (
            "tests/speculative/test_handles.py::test_a_new_version_retires_the_older_versions_handles_at_once",
        ),
    ),
    Mutant(
        "handles",
        "beam_runtime/broker/speculation/handles.py",
        "        if record.root != root:\n            raise _foreign(handle_id)",
        "        if False:\n            raise _foreign(handle_id)",
        (
            "tests/speculative/test_handle_workspaces.py::test_a_nested_workspace_refuses_the_outer_ones_handle_of_the_same_file",
        ),
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
    # setup and remove (tests/setup/test_setup_pins.py)
    Mutant(
        "setup",
        "beam_install/clients/jsonedit.py",
        "        if len(members) > 1:\n            return text[: member.start] + text[members[1].start :]",
        "        if False:\n            return text[: member.start] + text[members[1].start :]",
        _s("test_removing_our_entry_when_it_comes_first_keeps_the_other_servers"),
    ),
    Mutant(
        "setup",
        FM,
        "        del servers[ENTRY_NAME]\n        return str(tk.dumps(doc))",
        '        del doc["mcp_servers"]\n        return str(tk.dumps(doc))',
        _s("test_removing_our_codex_table_when_it_comes_first_keeps_the_other_servers"),
    ),
    Mutant(
        "setup",
        RM,
        "    if created and _is_empty(fmt.parse(structural)):",
        "    if created:",
        _s("test_a_json_file_setup_created_stays_with_what_the_user_added"),
    ),
    Mutant(
        "setup",
        RM,
        "            return None if created and not undone.strip() else undone",
        "            return None if created else undone",
        _s("test_a_toml_file_setup_created_stays_with_what_the_user_added"),
    ),
    Mutant(
        "setup",
        "beam_install/setup.py",
        "    if not skill_is_ours(old):\n        if refresh_only:",
        "    if False:\n        if refresh_only:",
        (
            "tests/setup/test_skill.py::test_setup_refreshes_every_stale_copy_it_owns_and_nothing_else",
            *_s("test_remove_keeps_a_skill_file_that_is_not_ours"),
        ),
    ),
    Mutant(
        "setup",
        RM,
        "    if not skill_is_ours(current.text):",
        "    if False:",
        _s("test_remove_keeps_a_skill_file_that_is_not_ours"),
    ),
    Mutant(
        "setup",
        "beam_install/skill.py",
        "    return MARKER_PREFIX in text",
        "    return True",
        (
            "tests/setup/test_skill.py::test_setup_refreshes_every_stale_copy_it_owns_and_nothing_else",
            *_s("test_remove_keeps_a_skill_file_that_is_not_ours"),
        ),
    ),
    Mutant(
        "setup",
        RM,
        "    for host in sorted({skill_host(c) for c in selected} - still):",
        "    for host in sorted({skill_host(c) for c in selected}):",
        _s("test_remove_keeps_the_shared_skill_while_another_client_needs_it"),
    ),
    Mutant(
        "setup",
        FM,
        "        env = {**self.env_of(old), **new[self.env_key]}",
        "        env = dict(new[self.env_key])",
        _s("test_refresh_keeps_the_users_environment_on_our_entries"),
    ),
    Mutant(
        "setup",
        FM,
        '        return {**old, **new, "env": {**self.env_of(old), **new["env"]}}',
        "        return {**old, **new}",
        _s("test_refresh_keeps_the_users_environment_on_our_entries"),
    ),
    Mutant(
        "setup",
        JR,
        "NEW_FILE_MODE = 0o600",
        "NEW_FILE_MODE = 0o644",
        _s("test_the_journal_and_the_files_setup_creates_are_private"),
    ),
    Mutant(
        "setup",
        JR,
        '    _write_text(tmp, json.dumps(body, indent=1) + "\\n", 0o600)',
        '    _write_text(tmp, json.dumps(body, indent=1) + "\\n", 0o644)',
        _s("test_the_journal_and_the_files_setup_creates_are_private"),
    ),
    Mutant(
        "setup",
        JR,
        '    except Timeout:\n        raise BeamError(\n            "lockTimeout",\n            f"another lean-beam setup',
        '    except Timeout:\n        yield\n        return\n        raise BeamError(\n            "lockTimeout",\n            f"another lean-beam setup',
        _s("test_a_lock_timeout_is_an_error_and_changes_nothing"),
    ),
    Mutant(
        "setup",
        JR,
        '    lock = FileLock(str(setup_dir(root) / "lock"), timeout=timeout, thread_local=False)',
        '    lock = FileLock(str(setup_dir(root) / "lock2"), timeout=timeout, thread_local=False)',
        _s("test_a_lock_timeout_is_an_error_and_changes_nothing"),
    ),
    Mutant(
        "setup",
        FM,
        "        if not argv or not argv[0]:\n            return []",
        "        if False:\n            return []",
        _s("test_an_entry_without_a_command_is_not_taken_for_ours"),
    ),
    Mutant(
        "setup",
        FM,
        "        if not command:\n            return []  # no command: it runs nothing, whatever its arguments say\n        return [str(a) for a in [command, *(args or [])]]",
        "        return [str(a) for a in [*([command] if command else []), *(args or [])]]",
        _s("test_an_entry_without_a_command_is_not_taken_for_ours"),
    ),
    Mutant(
        "setup",
        "beam_install/plan.py",
        "    if not argv:\n        return False",
        "    if not argv:\n        return True",
        _s("test_an_entry_without_a_command_is_not_taken_for_ours"),
    ),
    Mutant(
        "setup",
        FM,
        "        elif isinstance(servers, tk.items.InlineTable):",
        "        elif False:",
        _s("test_other_toml_server_shapes_are_left_alone_by_setup_and_remove"),
    ),
    Mutant(
        "setup",
        FM,
        '        elif servers is not None and _dotted_at_top(doc, "mcp_servers"):',
        "        elif False:",
        _s("test_other_toml_server_shapes_are_left_alone_by_setup_and_remove"),
    ),
    Mutant(
        "setup",
        FM,
        "        if isinstance(servers, tk.items.Array):",
        "        if False:",
        _s("test_other_toml_server_shapes_are_left_alone_by_setup_and_remove"),
    ),
    Mutant(
        "setup",
        FM,
        "        if len(servers) == 0 and not isinstance(servers, tk.items.Array):",
        "        if len(servers) == 0:",
        _s("test_other_toml_server_shapes_are_left_alone_by_setup_and_remove"),
    ),
    Mutant(
        "setup",
        FM,
        '        if servers is not None and not isinstance(servers, dict):\n            raise ValueError("`mcp_servers` is not a table")',
        '        if False:\n            raise ValueError("`mcp_servers` is not a table")',
        _s("test_a_codex_array_of_server_tables_is_refused_and_kept"),
    ),
]

VE, RCP = "beam_runtime/broker/verify/verify.py", "beam_runtime/broker/verify/receipt.py"


def _v(name: str) -> tuple[str, ...]:
    return (f"tests/verify/{name}",)


PINS += [
    Mutant(  # a module of the cone that was not built fails ok, error lines or not
        "verify",
        VE,
        '    clean = clean and all(m["built"] and not m["errors"] for m in modules)',
        '    clean = clean and all(not m["errors"] for m in modules)',
        _v("test_integrity.py::test_a_dependency_package_that_fails_to_build_fails_ok"),
        equivalent="_modules marks every listed module built after a finished build that exited "
        "0, unless Lake printed error lines for it; any other build fails clean by its exit code",
    ),
    Mutant(  # a source that changed while the verify ran fails ok
        "verify",
        VE,
        '        "ok": complete and clean and not flagged and not changed and not nothing,',
        '        "ok": complete and clean and not flagged and not nothing,',
        _v("test_integrity.py::test_an_edit_undone_during_the_build_is_never_ok"),
    ),
    Mutant(  # a mismatch alone (lean-toolchain, lake-manifest.json, ...) invalidates a receipt
        "verify",
        RCP,
        "    return Check(not mismatch and not stale, stale, mismatch)",
        "    return Check(not stale, stale, mismatch)",
        _v("test_integrity.py::test_the_target_module_imports_are_covered_by_the_receipt"),
    ),
    Mutant(  # the covered files are compared at all
        "verify",
        RCP,
        "    mismatch += [name for name in COVERED_FILES if files.get(name) != subject.files.get(name)]",
        "    mismatch += []",
        _v("test_integrity.py::test_the_target_module_imports_are_covered_by_the_receipt"),
    ),
    Mutant(  # a changed source makes the receipt stale
        "verify",
        RCP,
        "        if before.get(module) != subject.sources.get(module)",
        "        if False",
        _v("test_verify.py::test_a_receipt_holds_until_a_cone_source_changes"),
    ),
]
