"""The layout of tests/ (issue 21): it mirrors the package, and no test module imports another."""

from __future__ import annotations

import ast

from helpers.paths import REPO, TESTS

PACKAGE = REPO / "leaderboard_audit"
# folders of tests/ that are not a package folder: plugin-level tests, shared helpers, data
NOT_PACKAGE = {"plugin", "helpers", "data"}
TEST_MODULES = sorted(p for p in TESTS.rglob("test_*.py") if "data" not in p.relative_to(TESTS).parts)


def test_there_are_test_modules():
    assert len(TEST_MODULES) > 50


def imported_test_modules(source: str) -> list[str]:
    imported = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            imported.append("." * node.level + (node.module or ""))
            if not node.module:  # from . import test_x
                imported += [a.name for a in node.names]
    return [m for m in imported if any(part.startswith("test_") for part in m.lstrip(".").split("."))]


def test_imported_test_modules_are_found():
    src = (
        "import os\nfrom test_a import x\nfrom records.test_b import y\nfrom . import test_c\nimport helpers.records\n"
    )
    assert imported_test_modules(src) == ["test_a", "records.test_b", "test_c"]


def test_no_test_module_imports_another():
    bad = {str(p.relative_to(TESTS)): m for p in TEST_MODULES if (m := imported_test_modules(p.read_text()))}
    assert not bad, f"test modules importing test modules (move shared code to tests/helpers/): {bad}"


def test_every_test_module_sits_in_a_folder_of_the_package():
    stray = []
    for path in TEST_MODULES:
        folder = path.parent.relative_to(TESTS)
        if folder.parts and folder.parts[0] in NOT_PACKAGE:
            if folder.parts[0] != "plugin" or len(folder.parts) > 1:
                stray.append(str(path.relative_to(TESTS)))
        elif not (PACKAGE / folder / "__init__.py").is_file():
            stray.append(str(path.relative_to(TESTS)))
    assert not stray, f"not under a folder matching one of leaderboard_audit/: {stray}"


def test_every_test_folder_is_a_package():
    """Test modules in different folders may share a name (records/test_hostile.py,
    importers/test_hostile.py): each folder is a package, so pytest imports them apart."""
    folders = {p.parent for p in TEST_MODULES if p.parent != TESTS}
    missing = sorted(str(f.relative_to(TESTS)) for f in folders if not (f / "__init__.py").is_file())
    assert not missing, f"add an __init__.py to {missing}"


def test_helpers_and_data_stay_out_of_the_test_tree():
    assert not list((TESTS / "helpers").glob("test_*.py"))
    assert not (TESTS / "__init__.py").exists(), "tests/ must stay a rootdir on sys.path (from helpers... imports)"
