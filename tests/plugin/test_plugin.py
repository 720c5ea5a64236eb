"""The pytest plugin, driven through pytester: outcomes, -k, strict, reports, xdist."""

from __future__ import annotations

import sys

import json
from pathlib import Path

import pytest

from helpers.builders import stable_records, write
from leaderboard_audit.records.simulate import demo_spec, simulate
from helpers.paths import DATA

ARGS = ("-p", "no:cacheprovider", "-q")


def outcomes(result) -> dict[str, int]:
    """Outcome counts without pytest's own warnings count (AuditWarning adds to it) and without
    deselected checks (``mix`` has no case with fewer than 3 benchmarks)."""
    return {k: v for k, v in result.parseoutcomes().items() if k not in ("warnings", "warning", "deselected")}


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    return write(simulate(demo_spec(items_per_benchmark=60)), tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def stable_dir(tmp_path_factory) -> Path:
    return write(stable_records(), tmp_path_factory.mktemp("stable"))


def test_all_pass(pytester, stable_dir):
    result = pytester.runpytest("--audit", str(stable_dir), *ARGS)
    # 20 verdicts in 11 tests: one benchmark, so pooled's verdicts ride on the benchmark's
    # tests (brittleness, scope-dependent, keeps both); see test_one_benchmark_folds_pooled
    result.assert_outcomes(passed=11)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*leaderboard audit*", "*audit: 20 pass, 0 warn, 0 fail*"])


def test_fail_and_warn_outcomes(pytester, demo_dir):
    result = pytester.runpytest("--audit", str(demo_dir), *ARGS)
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] > 0 and outcomes["warn"] > 0
    assert result.ret == 1
    # a failure's message is the evidence table
    result.stdout.fnmatch_lines(["*band[[]pooled-*]: FAIL  value * threshold 0.020  margin -*", "*spread*"])
    result.stdout.fnmatch_lines(["*worst offenders*", "FAIL *margin -*"])


def test_warn_is_its_own_status_and_strict_fails(pytester, stable_dir):
    args = ("--audit", str(stable_dir), "--audit-threshold", "band_pass=-1", *ARGS)
    result = pytester.runpytest(*args)
    assert outcomes(result) == {"passed": 8, "warn": 3}  # 3 band tests carry 6 band warns (bench and pooled)
    result.stdout.fnmatch_lines(["audit: 14 pass, 6 warn, 0 fail"])
    assert result.ret == 0
    assert "W" in result.stdout.lines[0]
    strict = pytester.runpytest(*args, "--audit-strict")
    assert strict.ret == 1


def test_k_selects_checks(pytester, demo_dir):
    result = pytester.runpytest("--audit", str(demo_dir), "-k", "champions", *ARGS, "--co")
    ids = [line for line in result.stdout.lines if "::" in line]
    assert ids and all("test_champions[" in line for line in ids)
    assert len(ids) == 5  # pooled + 4 benchmarks
    result = pytester.runpytest("--audit", str(demo_dir), "-k", "mmlu and manufactured", *ARGS, "--co")
    ids = [line for line in result.stdout.lines if "::" in line]
    assert len(ids) == 5 and all("test_manufactured[mmlu-" in line for line in ids)


@pytest.mark.slow
def test_json_report_schema_and_determinism(pytester, demo_dir, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    pytester.runpytest("--audit", str(demo_dir), "--audit-report", str(a), *ARGS)
    pytester.runpytest("--audit", str(demo_dir), "--audit-report", str(b), *ARGS)
    assert a.read_bytes() == b.read_bytes()
    rep = json.loads(a.read_text())
    assert rep["format"] == "leaderboard-audit/report-v1" and rep["seed"] == 1234
    assert set(rep["records"]) >= {"path", "sha256", "models", "items", "configs", "benchmarks"}
    assert sorted(rep["scopes"]) == ["arc", "hellaswag", "mmlu", "pooled", "truthfulqa"]
    s = rep["scopes"]["pooled"]
    assert set(s) >= {"leaderboard", "pairs", "champions", "compression", "axes", "brittleness", "verdicts"}
    assert set(s["pairs"][0]) >= {
        "higher",
        "lower",
        "gap",
        "gap_items",
        "fragile_share",
        "robust_items",
        "higher_only",
        "lower_only",
        "robust_diff",
        "ci",
        "robust_tie",
        "manufactured",
        "reversing",
    }
    assert set(s["verdicts"][0]) >= {"check", "id", "status", "value", "threshold", "margin", "message"}
    assert {"pi_model", "pi_benchmark"} <= set(s["brittleness"])
    c = pytester.runpytest("--audit", str(demo_dir), "--audit-report", str(b), "--audit-seed", "7", *ARGS)
    assert c.ret == 1 and a.read_bytes() != b.read_bytes()


# demo_dir: four benchmarks; stable_dir: one (pooled folded in), the fast tier's smoke test of -n 2
@pytest.mark.parametrize("records", [pytest.param("demo_dir", marks=pytest.mark.slow), "stable_dir"])
def test_xdist_gives_identical_report_and_summary(pytester, records, request, tmp_path):
    demo_dir = request.getfixturevalue(records)
    a, b = tmp_path / "n0.json", tmp_path / "n2.json"
    r0 = pytester.runpytest_subprocess("--audit", str(demo_dir), "--audit-report", str(a), *ARGS, "-n", "0")
    r2 = pytester.runpytest_subprocess("--audit", str(demo_dir), "--audit-report", str(b), *ARGS, "-n", "2")
    assert a.read_bytes() == b.read_bytes()
    assert outcomes(r0) == outcomes(r2)  # xdist workers do not report the deselected mix

    def summary(res):
        lines = res.stdout.lines
        start = next(i for i, line in enumerate(lines) if "leaderboard audit" in line)
        end = next(i for i, line in enumerate(lines) if line.startswith("audit: "))
        return lines[start : end + 1]

    assert summary(r0) == summary(r2)
    assert sum("leaderboard audit" in line for line in r2.stdout.lines) == 1


def test_one_benchmark_folds_pooled_into_the_benchmarks_tests(pytester, stable_dir, tmp_path):
    """One benchmark: pooled holds its items, so a check whose section pooled reuses has
    one test per case, the benchmark's, judging both verdicts; the report keeps both scopes."""
    co = pytester.runpytest("--audit", str(stable_dir), *ARGS, "--co")
    ids = [line.split("::")[-1] for line in co.stdout.lines if "::" in line]
    assert len(ids) == 11 and [i for i in ids if "pooled" in i] == ["test_brittleness[pooled]"]
    assert "test_band[bench-alpha]" in ids and "test_manufactured[bench-alpha>beta]" in ids
    # -k pooled (or an old pooled id) still selects the tests that judge pooled's verdicts
    k = pytester.runpytest("--audit", str(stable_dir), *ARGS, "--co", "-k", "pooled")
    kids = [line.split("::")[-1] for line in k.stdout.lines if "::" in line]
    assert len(kids) == 10 and "test_brittleness[bench]" not in kids and "test_band[bench-gamma]" in kids
    k = pytester.runpytest("--audit", str(stable_dir), *ARGS, "--co", "-k", "band and pooled-gamma")
    assert [line.split("::")[-1] for line in k.stdout.lines if "::" in line] == ["test_band[bench-gamma]"]
    rep, xml = tmp_path / "r.json", tmp_path / "j.xml"
    run = pytester.runpytest("--audit", str(stable_dir), *ARGS, "--audit-report", str(rep), f"--junitxml={xml}")
    run.assert_outcomes(passed=11)
    data = json.loads(rep.read_text())
    ids_by_scope = {s: [v["id"] for v in data["scopes"][s]["verdicts"]] for s in ("bench", "pooled")}
    assert len(ids_by_scope["bench"]) == len(ids_by_scope["pooled"]) == 10
    assert [i.replace("bench", "pooled") for i in ids_by_scope["bench"]] == ids_by_scope["pooled"]
    assert 'name="audit_also" value="band[pooled-alpha]"' in xml.read_text()
    # -k on the benchmark alone still writes pooled (its test judged it)
    pytester.runpytest("--audit", str(stable_dir), *ARGS, "--audit-report", str(rep), "-k", "bench-alpha")
    assert {"band[pooled-alpha]", "band[bench-alpha]"} <= {
        v["id"] for s in json.loads(rep.read_text())["scopes"].values() for v in s["verdicts"]
    }


def test_a_test_fails_when_any_verdict_it_judges_fails(pytester):
    pytester.makepyfile(
        test_two="""
from leaderboard_audit.plugin.results import record_verdict
from leaderboard_audit.checks.verdicts import make_verdict


def test_two(request):
    ok = make_verdict("x", "x[bench]", "pass", 1.0, 0.5, 0.5, "fine")
    bad = make_verdict("x", "x[pooled]", "fail", 0.1, 0.5, -0.4, "pooled is not")
    record_verdict(request.node, ok, bad)
"""
    )
    r = pytester.runpytest("test_two.py", *ARGS)
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*x[[]pooled[]]: FAIL  value 0.100*"])


def test_gc_freeze_is_undone_and_a_freeze_of_the_process_left_alone(pytester, stable_dir):
    import gc

    class Probe:  # the freeze count while the audit's tests finish
        counts: list[int] = []

        def pytest_sessionfinish(self, session):
            self.counts.append(gc.get_freeze_count())

    assert gc.get_freeze_count() == 0
    pytester.runpytest("--audit", str(stable_dir), *ARGS, plugins=[Probe()])
    assert Probe.counts[-1] > 0 and gc.get_freeze_count() == 0  # frozen during the run, undone after
    gc.freeze()  # a process that froze objects itself: the plugin neither adds to nor undoes that
    try:
        mine = gc.get_freeze_count()
        pytester.runpytest("--audit", str(stable_dir), *ARGS, plugins=[Probe()])
        # frozen objects that are freed leave the count: it may only go down, and not to 0
        assert mine >= Probe.counts[-1] >= gc.get_freeze_count() > mine // 2
    finally:
        gc.unfreeze()


FREEZE_PROBE = """
import gc, os, pytest

@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    with open(os.environ["FROZEN_AT_END"], "a") as f:
        f.write(f"{'worker' if hasattr(config, 'workerinput') else 'main'} {gc.get_freeze_count()}\\n")
"""


@pytest.mark.slow
def test_a_process_that_ends_with_its_run_leaves_the_heap_frozen(pytester, stable_dir, tmp_path, monkeypatch):
    """The run of the process's own command line (serial, or the xdist controller, which
    computes the audit) keeps its frozen heap to the end: pytest's closing gc passes and the
    interpreter's exit skip it. A program that calls pytest.main goes on after the run: the
    freeze is undone. xdist workers compute nothing (they look verdicts up)."""
    pytester.makepyfile(freeze_probe=FREEZE_PROBE)
    monkeypatch.syspath_prepend(str(pytester.path))
    seen = tmp_path / "frozen.txt"
    monkeypatch.setenv("FROZEN_AT_END", str(seen))
    r = pytester.runpytest_subprocess("-p", "freeze_probe", "--audit", str(stable_dir), *ARGS)
    assert r.ret in (0, 1), r.stdout.str()[-2000:]
    beside = pytester.makepyfile(test_beside="def test_beside():\n    pass\n")  # xdist runs for the user's tests
    r = pytester.runpytest_subprocess("-p", "freeze_probe", "--audit", str(stable_dir), *ARGS, "-n", "2", str(beside))
    assert r.ret in (0, 1), r.stdout.str()[-2000:]
    script = pytester.makepyfile(
        main_script=f"import pytest, sys; sys.exit(pytest.main(['-p', 'freeze_probe', '--audit', {str(stable_dir)!r}]))"
    )
    r = pytester.run(sys.executable, str(script))
    assert r.ret in (0, 1), r.stdout.str()[-2000:]
    runs = [line.split() for line in seen.read_text().splitlines()]
    assert len(runs) == 5 and runs[0][0] == "main"
    cli, workers, ctl, program = int(runs[0][1]), [int(c) for w, c in runs[1:3]], int(runs[3][1]), int(runs[4][1])
    assert runs[1][0] == runs[2][0] == "worker" and runs[3][0] == runs[4][0] == "main"
    assert cli > 0 and ctl > 0  # left frozen where the process ends with the run
    assert max(workers) == 0  # a worker holds no audit: nothing of its own frozen
    assert program == 0  # undone where a program goes on after pytest.main


def test_junit_xml_carries_verdicts(pytester, demo_dir, tmp_path):
    xml = tmp_path / "junit.xml"
    pytester.runpytest("--audit", str(demo_dir), "-k", "champions", f"--junitxml={xml}", *ARGS)
    text = xml.read_text()
    assert 'name="audit_status" value="fail"' in text
    assert 'name="audit_margin"' in text


def test_thresholds_from_pyproject_and_command_line(pytester, stable_dir):
    pytester.makepyprojecttoml("[tool.leaderboard_audit]\nband_pass = -1\n")
    r = pytester.runpytest("--audit", str(stable_dir), *ARGS)
    assert outcomes(r) == {"passed": 8, "warn": 3}
    r = pytester.runpytest("--audit", str(stable_dir), "--audit-threshold", "band_pass=0.02", *ARGS)
    r.assert_outcomes(passed=11)
    r = pytester.runpytest("--audit", str(stable_dir), "--audit-threshold", "nonsense=1", *ARGS)
    assert r.ret == pytest.ExitCode.USAGE_ERROR


def test_silent_without_audit(pytester):
    pytester.makepyfile(test_user="def test_user():\n    assert True\n")
    r = pytester.runpytest(*ARGS)
    r.assert_outcomes(passed=1)
    assert "leaderboard audit" not in r.stdout.str()


def test_user_tests_and_audits_together(pytester, stable_dir):
    pytester.makepyfile(test_user="def test_user():\n    assert True\n")
    r = pytester.runpytest("--audit", str(stable_dir), "test_user.py", *ARGS)
    r.assert_outcomes(passed=12)


def test_bad_records_are_a_usage_error_naming_file_and_line(pytester, stable_dir, tmp_path):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(stable_dir, bad)
    f = bad / "bench" / "beta.jsonl"
    lines = f.read_text().splitlines()
    lines[4] = lines[4][:-5]
    f.write_text("\n".join(lines) + "\n")
    r = pytester.runpytest("--audit", str(bad), *ARGS)
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines([f"*{f}:5: unreadable JSON*"])


def test_submission_runs_only_the_newcomers_checks(pytester, demo_dir):
    r = pytester.runpytest("--audit", str(demo_dir), "--audit-submission", "dune-1b", *ARGS, "--co")
    ids = [line for line in r.stdout.lines if "::" in line]
    assert ids
    # the gate collects the checks with a gate role: its band and pairs, champions and ranking per scope
    assert all(("dune-1b" in line) or ("test_champions[" in line) or ("test_ranking[" in line) for line in ids)
    assert any("test_ranking[" in line for line in ids)


def test_library_audit_equals_plugin_report(pytester, demo_dir, tmp_path):
    from leaderboard_audit.records import load_records
    from leaderboard_audit.engine import audit, dumps_report

    out = tmp_path / "r.json"
    pytester.runpytest("--audit", str(demo_dir), "--audit-report", str(out), *ARGS)
    lib = audit(load_records(demo_dir), path=str(demo_dir))
    assert dumps_report(lib) == out.read_text()


def test_audit_lm_eval_runs_directly(pytester, tmp_path):
    """pytest --audit SRC --audit-format lm-eval on the real SmolLM2 sample logs (vendored slice)."""
    shared = DATA / "lm-eval-samples" / "SmolLM2-135M-Instruct"
    n_items = sum(1 for _ in next((shared / "arc_challenge_local").glob("samples_*.jsonl")).open())
    mapping = {
        "runs": {
            "arc_challenge_local": {"config": {"scoring": "ll", "template": "cloze_question"}},
            "arc_challenge_local_bare": {"config": {"scoring": "ll", "template": "cloze_plain"}},
        },
        "benchmark": "arc",
        "model": "HuggingFaceTB/SmolLM2-135M-Instruct",
        "reference": "ll|cloze_question",
    }
    mp = tmp_path / "map.json"
    mp.write_text(json.dumps(mapping))
    out = tmp_path / "r.json"
    r = pytester.runpytest(
        f"--audit={shared}",  # one argument: pytest does not search the repo's ini from it (guard.py)
        "--audit-format",
        "lm-eval",
        "--audit-mapping",
        str(mp),
        "--audit-metric",
        "acc",
        "--audit-report",
        str(out),
        *ARGS,
    )
    assert r.ret in (0, 1)
    rep = json.loads(out.read_text())
    assert sorted(rep["records"]["configs"]) == ["ll|cloze_plain", "ll|cloze_question"]
    assert rep["records"]["items"] == n_items and rep["records"]["benchmarks"] == ["arc"]
    ids = {v["id"] for v in rep["scopes"]["arc"]["verdicts"]}
    assert "band[arc-HuggingFaceTB/SmolLM2-135M-Instruct]" in ids
    r.stdout.fnmatch_lines(
        ["*test_checks.py::test_band[[]arc-HuggingFaceTB/SmolLM2-135M-Instruct[]]*"] if r.ret == 1 else ["*passed*"]
    )


@pytest.mark.slow
def test_k_progress_letters_stay_on_the_progress_line(pytester, demo_dir):
    """The terminal flush before a scope is computed ran inside the test's captured setup, so
    progress letters landed in "Captured stdout setup" blocks and the progress line was short
    (``-k champions``: ``F [100%]`` after the first of 5; UX review 2026-12-04 #9)."""
    import re

    result = pytester.runpytest_subprocess("--audit", str(demo_dir), "-k", "champions", "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert "Captured stdout setup" not in out
    assert re.search(r"^(\.\./)?test_checks\.py [.FW]{5} +\[100%\]$", out, re.M), out[:2000]
    verbose = pytester.runpytest_subprocess("--audit", str(demo_dir), "-k", "champions", "-v", "-p", "no:cacheprovider")
    assert re.search(
        r"^(\.\./)?test_checks\.py::test_champions\[pooled\] (FAILED|WARN|PASSED) ", verbose.stdout.str(), re.M
    )
