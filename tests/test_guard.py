"""The CI gate's records guard: data files with safe names only (B01-B03)."""

from __future__ import annotations

from leaderboard_audit.plugin.guard import main, not_data


def test_guard_refuses_config_code_and_shell_names(tmp_path, capsys):
    r = tmp_path / "records" / "bench"
    r.mkdir(parents=True)
    (r / "newbie.jsonl").write_text("{}\n")
    assert main([str(tmp_path / "records")]) == 0
    for name in ("../pytest.ini", "../evil.py", "conftest.py", "newbie$(touch PWNED).jsonl"):
        (r / name).write_text("")
    found = not_data(tmp_path / "records")
    assert any("pytest.ini" in f for f in found) and any("evil.py" in f for f in found)
    assert any("conftest.py" in f for f in found) and any("$(touch" in f for f in found)
    assert not any("newbie.jsonl" in f and "$" not in f for f in found)
    assert main([str(tmp_path / "records")]) == 4
    assert "refusing" in capsys.readouterr().err


def test_guard_refuses_a_records_folder_that_is_a_link(tmp_path):
    (tmp_path / "data" / "bench").mkdir(parents=True)
    (tmp_path / "data" / "bench" / "m.jsonl").write_text("{}\n")
    (tmp_path / "records").symlink_to("data")
    assert not_data(tmp_path / "data") == []
    assert [f.endswith("records: a link") for f in not_data(tmp_path / "records")] == [True]
    assert main([str(tmp_path / "records")]) == 4
