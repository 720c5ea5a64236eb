"""Records and options from strangers, through the plugin (issue: records from strangers).

Each case builds the bad input and asserts the behaviour pytest users expect: one
clear usage error (exit 4), never a traceback or INTERNALERROR, nothing half-written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from helpers.builders import stable_records, write, disk_full_on
from leaderboard_audit.engine import audit, dumps_report
from leaderboard_audit.records import Items, Records
from leaderboard_audit.records.grid import paper_grid
from helpers.paths import REPO

Q = ("-p", "no:cacheprovider", "-q")


@pytest.fixture
def stable_dir(tmp_path) -> Path:
    return write(stable_records(), tmp_path / "records")


def usage_error(result, *needles: str) -> None:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text and "Traceback" not in text, text
    for n in needles:
        assert n in text, (n, text)


@pytest.mark.parametrize("spelling", ["space", "equals"])
@pytest.mark.parametrize("bad", ["pytest.ini", "conftest.py", "tox.ini", "helper.py"])
def test_records_that_would_configure_pytest_are_refused(pytester, stable_dir, spelling, bad):
    # a data-only pytest.ini loosening thresholds, or code that would skip every check
    content = {
        "pytest.ini": "[pytest]\naudit_band_pass = 0.9\n",
        "tox.ini": "[pytest]\naddopts = -k nothing\n",
        "conftest.py": "import pytest\n@pytest.fixture(autouse=True)\ndef _s():\n    pytest.skip('x')\n",
        "helper.py": "print('code from the records')\n",
    }[bad]
    (stable_dir / bad).write_text(content)
    args = ["--audit", str(stable_dir)] if spelling == "space" else [f"--audit={stable_dir}"]
    result = pytester.runpytest_subprocess(*args, *Q)
    usage_error(result, "refusing a records path", bad)
    assert "code from the records" not in result.stdout.str()


def test_control_characters_in_names_are_refused_and_shown_escaped(pytester, tmp_path):
    """Names with control characters are refused when read (issue 46: a carriage return split
    a CSV row); the refusal shows them escaped, never raw."""
    r = stable_records(names=("alpha\x1b[31m", "beta\x07", "gamma"))
    d = write(r, tmp_path / "r")
    result = pytester.runpytest_subprocess(
        "--audit", str(d), "--audit-threshold", "band_pass=-1", *Q, "--audit-summary", "full"
    )
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "\x1b[31m" not in out and "\x07" not in out
    assert "'alpha\\x1b[31m' holds a control character" in out


def test_benchmark_named_pooled_is_refused(pytester, tmp_path):
    r = stable_records()
    items = Items(
        np.array(["pooled"] * len(r.items), dtype=object),
        r.items.item_id,
        r.items.gold,
        r.items.question,
        r.items.options,
    )
    d = tmp_path / "r"
    try:
        write(Records(r.correct, r.models, items, r.grid), d)
    except Exception as exc:  # the writer may refuse the name itself
        assert "pooled" in str(exc)
        return
    result = pytester.runpytest("--audit", str(d), *Q)
    usage_error(result, "pooled")


def test_colliding_test_ids_count_every_failure(pytester, tmp_path):
    grid = paper_grid()
    n = 20
    benches = ["a"] * n + ["a-b"] * n
    items = Items(
        np.array(benches, dtype=object),
        np.array([f"q{i}" for i in range(2 * n)], dtype=object),
        [0] * 2 * n,
        [None] * 2 * n,
        [None] * 2 * n,
    )
    rng = np.random.default_rng(3)
    C = rng.random((2, 2 * n, len(grid))) < 0.5
    d = write(Records(C, ("b-c", "c"), items, grid), tmp_path / "r")
    rep = tmp_path / "r.json"
    result = pytester.runpytest("--audit", str(d), *Q, "--audit-report", str(rep))
    data = json.loads(rep.read_text())
    failed = sum(v["status"] == "fail" for s in data["scopes"].values() for v in s["verdicts"])
    assert result.parseoutcomes()["failed"] == failed


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--audit", ""], "empty path"),
        (["--audit-submission", "x"], "--audit-submission needs --audit"),
        (["--audit", "{d}", "--audit-seed", "abc"], "--audit-seed seed='abc'"),
        (["--audit", "{d}", "--audit-seed", "-1"], "--audit-seed"),
        (["--audit", "{d}", "--audit-boot", "1000000000"], "between 100 and 1,000,000"),
        (["--audit", "{d}", "--audit-boot", "5"], "between 100"),
        (["--audit", "{d}", "--audit-threshold", "band_pass=nan"], "must be finite"),
        (["--audit", "{d}", "--audit-threshold", "band_pass=inf"], "must be finite"),
        (["--audit", "{d}", "--audit-threshold", "compression_k=2.7"], "compression_k"),
        (["--audit", "{d}", "--audit-threshold", "compression_k=-5"], "compression_k"),
        (["--audit", "{d}", "--audit-threshold", "band_pass"], "expected NAME=VALUE"),
        (["--audit", "{d}", "--audit-threshold", "band_pas=0.1"], "unknown threshold 'band_pas'"),
        (["--audit", "{d}", "--audit-alpha", "2"], "alpha"),
    ],
)
def test_bad_options_are_usage_errors(pytester, stable_dir, args, needle):
    result = pytester.runpytest(*[a.replace("{d}", str(stable_dir)) for a in args], *Q)
    usage_error(result, needle)


@pytest.mark.parametrize(
    "where, text, needle",
    [
        ("pyproject", '[tool.leaderboard_audit]\nseed = "abc"\n', "seed='abc'"),
        ("pyproject", "[tool.leaderboard_audit]\nband_pas = 0.1\n", "unknown key(s) ['band_pas']"),
        ("pyproject", "[tool.leaderboard_audit]\ncompression_k = 2.7\n", "compression_k"),
        ("ini", "[pytest]\naudit_seed = abc\n", "ini audit_seed"),
        ("ini", "[pytest]\naudit_band_pass = nan\n", "ini audit_band_pass"),
    ],
)
def test_bad_config_files_are_usage_errors(pytester, where, text, needle):
    # records inside the project, so pytest finds the project's ini above them
    d = write(stable_records(), pytester.path / "records")
    pytester.makefile(
        ".toml" if where == "pyproject" else ".ini", **{"pyproject" if where == "pyproject" else "pytest": text}
    )
    result = pytester.runpytest("--audit", str(d), *Q)
    usage_error(result, needle)


def test_precedence_cli_over_ini_over_pyproject(pytester, stable_dir, tmp_path):
    pytester.makefile(".toml", pyproject="[tool.leaderboard_audit]\nseed = 7\nband_pass = 0.3\n")
    rep = tmp_path / "r.json"
    pytester.runpytest("--audit", str(stable_dir), *Q, "--audit-report", str(rep))
    data = json.loads(rep.read_text())
    assert data["seed"] == 7 and data["thresholds"]["band_pass"] == 0.3
    pytester.runpytest(
        "--audit",
        str(stable_dir),
        *Q,
        "--audit-report",
        str(rep),
        "--audit-seed",
        "9",
        "--audit-threshold",
        "band_pass=0.4",
    )
    data = json.loads(rep.read_text())
    assert data["seed"] == 9 and data["thresholds"]["band_pass"] == 0.4


def test_unwritable_report_path_is_refused_before_the_audit(pytester, stable_dir, tmp_path):
    (tmp_path / "a-file").write_text("x")
    target = tmp_path / "a-file" / "r.json"  # a file where a directory should be
    result = pytester.runpytest(
        "--audit", str(stable_dir), *Q, "--audit-report", str(target), "--audit-html", str(tmp_path / "ok.html")
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "INTERNALERROR" not in result.stdout.str() and "leaderboard audit" not in result.stdout.str()
    assert f"--audit-report {target}: the folder" in result.stderr.str()
    assert not (tmp_path / "ok.html").exists() and not target.exists()


def test_a_write_failing_after_the_audit_is_a_clear_error_after_the_results(
    pytester, stable_dir, tmp_path, monkeypatch
):
    disk_full_on(monkeypatch, ".json")
    target = tmp_path / "r.json"
    result = pytester.runpytest(
        "--audit", str(stable_dir), *Q, "--audit-report", str(target), "--audit-html", str(tmp_path / "ok.html")
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    out = result.stdout.str()
    assert "INTERNALERROR" not in out and "Traceback" not in out
    result.stdout.fnmatch_lines(["*leaderboard audit*", "*audit: 20 pass*", "ERROR: --audit-report *cannot write*"])
    assert (tmp_path / "ok.html").is_file() and not target.exists()


def test_large_seeds_do_not_alias_small_ones():
    r = stable_records(right=(40, 35, 30))
    a = dumps_report(audit(r, seed=1234, n_boot=300))
    b = dumps_report(audit(r, seed=1234 + 2**32, n_boot=300))
    assert a.replace('"seed": 1234', "") != b.replace(f'"seed": {1234 + 2**32}', "")


@pytest.mark.parametrize("name", ["tiny", "demo", "real", "release/records", "release/records-v1"])
def test_bundled_fixtures_are_data_only(name):
    from leaderboard_audit.plugin.guard import problems

    root = REPO / "fixtures" / name
    assert root.is_dir() and problems(root) == []
