"""The dependency closure and root paths, on real files (in-process: these are pure reads)."""

from __future__ import annotations

import json
from pathlib import Path

import platformdirs
import pytest

from beam_install.payload import closure, compute_payload
from beam_runtime import layout
from beam_runtime.errors import BeamError


def fake_dist(site: Path, name: str, requires: list[str], *, editable: bool = False) -> None:
    """A minimal installed distribution: METADATA, RECORD, one module, maybe direct_url.json."""
    module = name.replace("-", "_")
    info = site / f"{module}-1.0.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0"]
    lines += [f"Requires-Dist: {spec}" for spec in requires]
    (info / "METADATA").write_text("\n".join(lines) + "\n")
    (site / f"{module}.py").write_text("VALUE = 1\n")
    record = [f"{module}.py,,", f"{info.name}/METADATA,,", f"{info.name}/RECORD,,",
              f"../../../bin/{module},,"]  # fmt: skip
    if name == "lean-beam":  # its launchers embed the hash of the import gate's source
        (site / "beam_runtime").mkdir()
        (site / "beam_runtime" / "bytecode_gate.py").write_text("def launch(*args): pass\n")
        record.append("beam_runtime/bytecode_gate.py,,")
    if editable:
        (info / "direct_url.json").write_text(
            json.dumps({"url": "file:///src", "dir_info": {"editable": True}})
        )
        record.append(f"{info.name}/direct_url.json,,")
    (info / "RECORD").write_text("\n".join(record) + "\n")


def test_closure_evaluates_markers_and_ignores_extras(tmp_path: Path) -> None:
    site = tmp_path / "site"
    fake_dist(site, "lean-beam", ["depa>=1", 'extra-only; extra == "docs"',
                                  'ancient; python_version < "3.0"'])  # fmt: skip
    fake_dist(site, "depa", ["Dep_B"])
    fake_dist(site, "dep-b", [])
    assert [found.name for found in closure([str(site)])] == ["dep-b", "depa", "lean-beam"]


def test_missing_dependency_is_reported(tmp_path: Path) -> None:
    site = tmp_path / "site"
    fake_dist(site, "lean-beam", ["gone"])
    with pytest.raises(BeamError) as caught:
        closure([str(site)])
    assert caught.value.category == "missingDistribution"


def test_editable_dependency_is_refused(tmp_path: Path) -> None:
    site = tmp_path / "site"
    fake_dist(site, "lean-beam", ["depa"])
    fake_dist(site, "depa", [], editable=True)
    with pytest.raises(BeamError) as caught:
        compute_payload([str(site)])
    assert caught.value.category == "editableInstall"
    assert "depa" in caught.value.message


def test_payload_from_records_skips_scripts_and_install_records(tmp_path: Path) -> None:
    site = tmp_path / "site"
    fake_dist(site, "lean-beam", ["depa"])
    fake_dist(site, "depa", [])
    payload = compute_payload([str(site)])
    paths = [item.relpath for item in payload.files]
    assert "site/depa.py" in paths
    assert "site/lean_beam-1.0.dist-info/METADATA" in paths
    assert not any(path.endswith("RECORD") or "/bin/lean_beam" in path for path in paths)
    assert {"bin/lean-beam", "bin/lean-beam-mcp", "bin/beam-cli"} <= set(paths)
    assert payload.runtime_id == f"1.0-{payload.sha256[:16]}"


def test_editable_lean_beam_is_staged_from_its_package_directories() -> None:
    payload = compute_payload()  # this test process runs the editable development install
    paths = {item.relpath for item in payload.files}
    assert "site/beam_runtime/identity.py" in paths
    assert "site/beam_install/install.py" in paths
    assert not any("__editable__" in path or path.endswith(".pth") for path in paths)
    assert not any("__pycache__" in path for path in paths)


def test_default_root_agrees_with_platformdirs() -> None:
    assert layout.default_install_root() == str(Path(platformdirs.user_data_dir("beam")))


@pytest.mark.parametrize("raw", ["rel", "/a/../b", "/", "", "~"])
def test_refused_spellings(raw: str) -> None:
    with pytest.raises(BeamError) as caught:
        layout.check_root_path(raw)
    assert caught.value.category == "invalidInstallRoot"


def test_tilde_is_expanded_and_variables_are_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert layout.check_root_path("~/beam") == tmp_path.resolve() / "beam"
    with pytest.raises(BeamError):
        layout.check_root_path("$HOME/beam")


def test_a_lean_beam_without_its_import_gate_is_refused(tmp_path: Path) -> None:
    site = tmp_path / "site"
    fake_dist(site, "lean-beam", [])
    (site / "beam_runtime" / "bytecode_gate.py").unlink()
    record = site / "lean_beam-1.0.dist-info" / "RECORD"
    lines = record.read_text().splitlines()
    record.write_text("\n".join(line for line in lines if "bytecode_gate" not in line) + "\n")
    with pytest.raises(BeamError) as caught:
        compute_payload([str(site)])
    assert caught.value.category == "incompleteDistribution"
    assert "import gate site/beam_runtime/bytecode_gate.py" in caught.value.message
