"""The source rules of the verification policy on plain text: what counts as a leftover search
tactic, `admit` or a debug option, and what is only a comment, a string or a name."""

from __future__ import annotations

from beam_runtime.broker.verify.policy import Policy, code_lines, lakefile_sites, source_sites

TEXT = """\
/- a block comment: exact? and /- nested: set_option debug.skipKernelTC true -/ still -/
-- a line comment: apply?
def hint : String := "exact? simp? admit"
theorem a : True := by exact?
theorem b : True := by
  simp?
  · admit
theorem c (h : True) : True := by first | rw? | hint
theorem d : True := by aesop?; decide?
example : List.find? (· == 1) [1] = some 1 := rfl
set_option debug.skipKernelTC true in
theorem e : True := trivial
set_option debug.skipKernelTC false in
theorem f : True := trivial
"""


def test_search_tactics_admit_and_debug_options_are_found_by_line() -> None:
    found = [(s.line, s.flag) for s in source_sites(TEXT, Policy(), tactics=True)]
    assert found == [
        (4, "tactic:exact?"),
        (6, "tactic:simp?"),
        (7, "tactic:admit"),
        (8, "tactic:rw?"),
        (8, "tactic:hint"),
        (9, "tactic:aesop?"),
        (9, "tactic:decide?"),
        (11, "option:debug.skipKernelTC"),
    ]


def test_each_rule_can_be_turned_off_and_imports_get_only_the_option_rule() -> None:
    relaxed = Policy(forbid_search_tactics=False, forbid_sorry=False)
    assert [s.flag for s in source_sites(TEXT, relaxed, tactics=True)] == [
        "option:debug.skipKernelTC"
    ]
    assert source_sites(TEXT, Policy(forbid_debug_options=False), tactics=False) == []
    imported = source_sites(TEXT, Policy(), tactics=False)
    assert [(s.line, s.flag) for s in imported] == [(11, "option:debug.skipKernelTC")]


def test_code_lines_blank_comments_and_strings_and_keep_line_numbers() -> None:
    lines = code_lines(TEXT)
    assert len(lines) == len(TEXT.split("\n"))
    assert "exact?" not in lines[0] and "apply?" not in lines[1]
    assert lines[2].startswith('def hint : String := "') and "exact?" not in lines[2]


def test_the_lakefile_can_set_debug_options_for_every_module() -> None:
    toml = 'name = "demo"\nmoreLeanArgs = ["-Ddebug.skipKernelTC=true"]  # debug.ignored\n'
    found = lakefile_sites("lakefile.toml", toml, Policy())
    assert [(s.line, s.flag) for s in found] == [(2, "option:debug.skipKernelTC")]
    lean = (
        "import Lake\n-- debug.ignored\npackage demo where\n"
        "  leanOptions := #[⟨`debug.skipKernelTC, true⟩]\n"
    )
    assert [s.line for s in lakefile_sites("lakefile.lean", lean, Policy())] == [4]
    assert lakefile_sites("lakefile.toml", toml, Policy(forbid_debug_options=False)) == []
