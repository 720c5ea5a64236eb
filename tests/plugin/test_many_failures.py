"""Many failed audit tests: pytest's failure section is left out above a limit (issue 12).

pytest's failure section repeats every failed verdict (thousands of lines at leaderboard
scale) and looks up each failure's teardown reports by scanning all reports (quadratic:
~50 s for 7,800 failures). Above ``FAILURE_DETAILS_LIMIT`` failed audit tests the plugin
leaves it out unless ``--tb`` was given, and says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from leaderboard_audit.plugin.results import FAILURE_DETAILS_LIMIT
from leaderboard_audit.records import write_records
from leaderboard_audit.records.simulate import SimModel, SimSpec, simulate

ARGS = ("-p", "no:cacheprovider", "-q", "-p", "no:randomly")


@pytest.fixture(scope="module")
def many_dir(tmp_path_factory) -> Path:
    # 60 models whose scores swing with the scoring method: (nearly) every band test fails
    models = tuple(SimModel(f"m{j:02d}", 1.5 - j / 20, scoring_shift={"ll": 3.0 - j / 10}) for j in range(60))
    spec = SimSpec(models, {"arc": 150, "mmlu": 150}, seed=3)  # enough items for Cochran's Q (v4)
    out = tmp_path_factory.mktemp("many")
    write_records(simulate(spec), out)
    return out


@pytest.mark.slow
def test_failure_section_is_left_out_above_the_limit(pytester, many_dir):
    result = pytester.runpytest("--audit", str(many_dir), "-k", "band", *ARGS)
    failed = result.parseoutcomes()["failed"]
    assert failed > FAILURE_DETAILS_LIMIT
    text = result.stdout.str()
    assert "= FAILURES =" not in text
    assert f"{failed} audit tests failed: pytest's per-test failure section is left out" in text
    assert "leaderboard audit" in text  # the audit's own summary still runs


@pytest.mark.slow
def test_tb_given_keeps_the_failure_section(pytester, many_dir):
    result = pytester.runpytest("--audit", str(many_dir), "-k", "band", "--tb=short", *ARGS)
    text = result.stdout.str()
    assert "= FAILURES =" in text and "failure section is left out" not in text


def test_below_the_limit_the_section_stays(pytester, many_dir):
    result = pytester.runpytest("--audit", str(many_dir), "-k", "band and m0", *ARGS)
    assert 0 < result.parseoutcomes()["failed"] <= FAILURE_DETAILS_LIMIT
    assert "= FAILURES =" in result.stdout.str()
