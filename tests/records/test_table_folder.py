"""A folder holding one long table (records.parquet, grid.json) beside notes: a README, a
SOURCE.md, a LICENSE (UX review 2026-12-04 #4: refused with "no records files")."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.builders import stable_records, write
from leaderboard_audit.records import RecordsError, load_records
from leaderboard_audit.records.table import table_in_folder, write_table
from leaderboard_audit.cli.audit import main as audit_main
from leaderboard_audit.engine.sources import load_for_audit


@pytest.fixture
def table_folder(tmp_path):
    d = tmp_path / "mmlu"
    d.mkdir()
    write_table(stable_records(), d / "records.parquet")  # + grid.json beside it
    (d / "SOURCE.md").write_text("where these records come from\n")
    (d / "README").write_text("notes\n")
    (d / "LICENSE.txt").write_text("CC-BY-4.0\n")
    return d


def test_a_table_beside_notes_is_the_records(table_folder):
    assert table_in_folder(table_folder) == table_folder / "records.parquet"
    whole = load_records(table_folder)
    alone = load_records(table_folder / "records.parquet")
    assert whole.models == alone.models and np.array_equal(whole.correct, alone.correct)
    assert load_for_audit(str(table_folder)).models == alone.models


def test_the_cli_and_the_plugin_audit_that_folder(table_folder, pytester, capsys):
    assert audit_main([str(table_folder)]) == 0
    assert "no records files" not in capsys.readouterr().err
    result = pytester.runpytest("--audit", str(table_folder), "-p", "no:cacheprovider", "-q", "--tb=no")
    assert result.ret == 0, result.stdout.str()[-2000:]


def test_a_table_beside_other_files_names_them_and_the_fix(table_folder):
    (table_folder / "notes.json").write_text("{}")
    with pytest.raises(RecordsError) as e:
        load_records(table_folder)
    msg = str(e.value)
    assert "records.parquet" in msg and "beside notes.json" in msg
    assert f"pass the table itself ({table_folder / 'records.parquet'})" in msg
    assert "no records files" not in msg
    (table_folder / "notes.json").unlink()
    write_table(stable_records(), table_folder / "more.csv", write_grid=False)
    with pytest.raises(RecordsError, match=r"holds 2 records tables \(more.csv, records.parquet\)"):
        load_for_audit(str(table_folder))


def test_a_records_v1_folder_stays_one(tmp_path):
    d = write(stable_records(), tmp_path / "v1")
    (d / "README.md").write_text("notes\n")
    write_table(stable_records(), d / "stray.parquet", write_grid=False)
    assert table_in_folder(d) is None  # benchmark folders: records-v1, whatever lies beside them
    assert load_records(d).models == stable_records().models
