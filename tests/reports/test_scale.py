"""Reports at leaderboard scale (issue 22): budgets, 'what to do next' first, figures that
summarise, the publishable leaderboard, and the defects the issue lists."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

from helpers.builders import write
from leaderboard_audit.engine import audit
from leaderboard_audit.engine.gate import with_gate
from leaderboard_audit.engine.evidence import enrich_report
from leaderboard_audit.records import load_records
from leaderboard_audit.reports.html import render_html
from leaderboard_audit.reports.leaderboard import render_csv, render_leaderboard, render_md
from leaderboard_audit.reports.markdown import render_markdown
from leaderboard_audit.reports.next_steps import next_steps
from leaderboard_audit.reports.terminal import evidence_block, render_summary
from leaderboard_audit.records.simulate import demo_spec, simulate
from helpers.paths import REPO

LONG = "an-organisation-with-a-long-name/model"


def board_table(path: Path, n_models: int, n_items: int, seed: int = 0, prefix: str = LONG) -> Path:
    """A one-configuration long CSV table (the shape of today's leaderboards): many printed ties."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(0, 1.2, n_models)
    difficulty = rng.normal(0, 1, n_items)
    C = rng.random((n_models, n_items)) < 1 / (1 + np.exp(-(ability[:, None] - difficulty[None, :])))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["model", "benchmark", "item_id", "config", "correct"])
    for m in range(n_models):
        for i in range(n_items):
            w.writerow([f"{prefix}-{m:04d}", "mmlu", f"mmlu/{i:04d}", "gen|letter_plain|p0", int(C[m, i])])
    path.write_text(buf.getvalue())
    return path


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> dict:
    path = board_table(tmp_path_factory.mktemp("board") / "board.csv", 150, 30)
    r = load_records(path)
    return enrich_report(audit(r, n_boot=200), r, n_boot=200)


@pytest.fixture(scope="module")
def demo() -> dict:
    r = simulate(demo_spec(items_per_benchmark=60))
    return enrich_report(audit(r, n_boot=300), r, n_boot=300)


def verdicts_of(report: dict) -> list[dict]:
    return [v for s in report["scopes"].values() for v in s["verdicts"]]


# -- terminal -------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [80, 120, 200])
def test_short_summary_fits_sixty_lines_with_ids_whole(board, width):
    text = render_summary(board, verdicts_of(board), width=width)
    lines = text.splitlines()
    assert len(lines) <= 60, len(lines)
    ids = {v["id"] for v in verdicts_of(board)}
    offenders = [x for x in lines if re.match(r"^(WARN|FAIL) ", x)]
    assert offenders
    for line in offenders:
        vid = line[5:].split("  margin ", 1)[0]
        assert vid in ids, line  # the id is never cut (old code cut it at 50 characters)


@pytest.mark.parametrize("width", [80, 120, 200])
def test_short_summary_keeps_pytests_counts_line_inside_sixty_lines(board, width):
    """pytest's counts line comes after the "audit:" line and inside the 60-line budget."""
    from leaderboard_audit.reports.terminal import counts_line

    vs = verdicts_of(board)
    trailer = [counts_line(board, {"warn": len(vs) // 2, "skipped": 3}, len(vs) // 2 - 3, vs)]
    lines = render_summary(board, vs, width=width, trailer=trailer).splitlines()
    assert len(lines) <= 60, len(lines)
    at = next(j for j, x in enumerate(lines) if x.startswith("audit: "))
    assert lines[at + 1].startswith("counts: pytest's ") and all(x.startswith("    ") for x in lines[at + 2 :])


def test_short_summary_starts_with_what_to_do_next(board):
    text = render_summary(board, verdicts_of(board), width=200)
    head = " ".join(x.strip() for x in text.split("checks (")[0].splitlines())  # wrapped lines joined
    assert "what to do next:" in head and "the harness was not varied (one configuration)" in head
    assert "leaderboard-audit collect" in head
    assert re.search(r"identified order: \d+ tiers? of [\d, ]+ models", head)
    assert re.search(r"\d+ printed as ties", head)
    # v4: the board's rule first, then one action per finding (pairs too close to call: the items needed)
    assert "publish the board by the harness-averaged comparison" in head
    assert re.search(r"jointly robust items needed: (median [\d,.]+, range [\d,]+-[\d,]+|[\d,]+)\)", head)


def test_one_benchmark_pooled_twin_not_repeated(board):
    text = render_summary(board, verdicts_of(board), width=200)
    assert "[mmlu-" not in text and "[pooled-" in text
    assert "pooled = mmlu, one benchmark" in text


def test_one_config_board_and_header_plurals(board):
    text = render_summary(board, verdicts_of(board), width=200)
    assert "1 configs" not in text and "1 config," in text
    board_head = next(x for x in text.splitlines() if x.startswith("rank "))
    assert board_head.split() == ["rank", "model", "reference"]  # min = max = reference: left out


def test_evidence_lists_of_dicts_never_print_none():
    v = {
        "id": "mix[arc]",
        "status": "fail",
        "value": 1.0,
        "threshold": 0.0,
        "margin": -1.0,
        "message": "m",
        "evidence": {
            "status_changes": [{"id": "axes[pooled]", "check": "axes", "before": "warn", "after": "fail"}],
            "crossings": [],
        },
    }
    text = evidence_block(v)
    assert "None" not in text and "axes[pooled] warn -> fail" in text
    assert re.search(r"crossings\s+-", text)


# -- Markdown -------------------------------------------------------------------------------


def test_markdown_budget_is_kept_and_says_what_it_left_out(board):
    full = render_markdown(board, max_bytes=10**9)
    for budget in (60_000, 20_000):
        assert len(full.encode()) > budget
        small = render_markdown(board, max_bytes=budget)
        assert len(small.encode()) <= budget
        assert "left out" in small or "Cut here" in small
        assert small.index("## What to do next") < small.index("## Verdicts needing attention")
    tiny = render_markdown(board, max_bytes=1500)
    assert len(tiny.encode()) <= 1500 and "Cut here to fit 1,500 bytes" in tiny
    assert render_markdown(board) == render_markdown(board)  # byte-identical


def test_markdown_leaves_out_skipped_sections(board):
    text = render_markdown(board)
    assert "Axes: robust accuracy per axis" not in text  # the axes check is skipped on one config
    assert "skipped: band, champions, compression, axes, brittleness" in text


def test_markdown_with_a_submission_fits_a_pr_comment(demo):
    r = simulate(demo_spec(items_per_benchmark=60))
    sub = with_gate(audit(r, n_boot=300), r, ["borealis-8b"], n_boot=300)
    text = render_markdown(sub)
    assert len(text.encode()) <= 64_000 and "## Submission gate" in text


# -- HTML -----------------------------------------------------------------------------------


def test_html_figures_summarise_at_scale(board):
    text = render_html(board)
    assert 'id="fig-0"' in text and "Distributions over every model" in text
    fig2 = re.search(r'<figure id="fig-2".*?</figure>', text, re.S).group(0)
    assert fig2.count('class="pair-row"') == 30  # top and bottom 15 of 149 pairs, not one row each
    for fid in ("fig-1", "fig-3", "fig-4"):  # their checks are skipped on one configuration
        assert f'<figure id="{fid}"' not in text and f'id="{fid}-skipped"' in text
    assert "most destructive" not in text


def test_html_script_is_allowed_by_its_hash_and_tables_page(board):
    text = render_html(board)
    scripts = re.findall(r"<script>(.*?)</script>", text, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    csp = re.search(r'Content-Security-Policy" content="([^"]+)"', text).group(1)
    assert f"script-src 'sha256-{digest}'" in csp and "default-src 'none'" in csp
    assert re.search(r'<table class="leaderboard dt">', text)


def test_html_long_messages_fold_into_details(board):
    text = render_html(board)
    ranking = next(v for v in board["scopes"]["pooled"]["verdicts"] if v["check"] == "ranking")
    assert len(ranking["message"]) > 500
    assert "<summary>the rest (" in text


def test_html_fits_its_budget_by_row_caps(board):
    full = render_html(board, max_bytes=10**9)
    small = render_html(board, max_bytes=len(full.encode()) // 2)
    assert len(small.encode()) <= len(full.encode()) // 2 and "more rows left out" in small


def test_html_next_steps_come_first(demo):
    text = render_html(demo)
    assert text.index('id="next"') < text.index('id="figures"')
    assert "5 adjacent pairs" in text and "manufactured by the harness" in text


# -- what to do next ------------------------------------------------------------------------


def test_next_steps_name_causes_axis_and_an_identified_pair(demo):
    steps = next_steps(demo)
    assert steps[0].startswith("publish the board by the harness-averaged comparison")
    assert steps[1].startswith("5 adjacent pairs: 3 identified (unadjusted);")
    assert any(s.startswith("false alarms: a pair fails only after Holm over the board's") for s in steps)
    assert any(s.startswith("an identified pair beside them:") for s in steps)
    assert any("is load-bearing:" in s for s in steps)
    assert not any("harness was not varied" in s for s in steps)


def test_next_steps_render_v3_keys_when_present(demo):
    import copy

    rep = copy.deepcopy(demo)
    s = rep["scopes"]["pooled"]
    s["averaged"] = {"tiers": [["atlas-70b"], ["borealis-8b", "dune-1b"]], "winner": "atlas-70b", "edges": []}
    s["unidentifiable_pairs"] = 4
    steps = next_steps(rep)
    assert any(
        x.startswith("harness-averaged order: 2 tiers of 1, 2 models") and "winner: atlas-70b" in x for x in steps
    )
    assert any(x.startswith("4 of 5 adjacent pairs have too few") and "averaged order" in x for x in steps)


# -- the publishable leaderboard ------------------------------------------------------------


def test_leaderboard_markdown_and_csv(demo):
    text = render_md(demo)
    assert (
        "| rank | model | rank interval | score | 95% CI | reference | band (min-max) | robust | models below | "
        "models below (robust items) | configs won |" in text
    )
    plain = text.replace("\\", "")  # Markdown escapes
    assert "Ranked by the score" in plain and "95% simultaneous coverage" in plain  # AUDITS v5
    assert "## Harness" in text and text.index("- scoring:") < text.index("- template:")
    rows = list(csv.DictReader(io.StringIO(render_csv(demo))))
    assert len(rows) == 6 and sum(int(r["configs won"]) for r in rows) >= 26
    ranks = [int(r["rank"].rstrip("=")) for r in rows]
    assert ranks == sorted(ranks)
    # the rank interval starts at 1 + the models separated above; "models below" counts those it is above
    board = demo["scopes"]["pooled"]["averaged"]["board"]["rows"]
    above = {r["model"]: r["models_above"] for r in board}
    assert all(int(r["rank interval"].split("-")[0]) == 1 + above[r["model"]] for r in rows)
    below = {r["model"]: r["models_below"] for r in board}
    assert all(int(r["models below"]) == below[r["model"]] for r in rows)


def test_leaderboard_markdown_caps_rows_beyond_a_hundred(board):
    text = render_leaderboard(board, "board.md")
    assert len(text.encode()) <= 64 * 1024
    assert "Top 100 of 150 models" in text
    assert len(list(csv.DictReader(io.StringIO(render_leaderboard(board, "b.csv"))))) == 150
    assert "One configuration" in text


def test_leaderboard_csv_defuses_formulas(tmp_path):
    path = board_table(tmp_path / "t.csv", 3, 20, prefix="=HYPERLINK")
    r = load_records(path)
    rows = list(csv.reader(io.StringIO(render_csv(audit(r, n_boot=200)))))
    assert all(row[1].startswith("'=HYPERLINK") for row in rows[1:])
    assert all(row[6] == "-" and row[7] == "-" for row in rows[1:])  # one config: a plain dash, not "'-"


# -- the plugin -----------------------------------------------------------------------------

ARGS = ("-p", "no:cacheprovider", "-q")


@pytest.mark.slow
def test_plugin_writes_the_leaderboard_and_says_where(pytester, tmp_path):
    d = write(simulate(demo_spec(items_per_benchmark=20)), tmp_path / "demo")
    out = tmp_path / "board.csv"
    res = pytester.runpytest("--audit", str(d), "--audit-leaderboard", str(out), "--audit-boot", "200", *ARGS)
    text = res.stdout.str()
    assert out.exists() and out.read_text().startswith(
        '"rank","model","rank interval","score"'
    )  # every field quoted (issue 46, C04)
    assert f"--audit-leaderboard: wrote {out} (" in text


@pytest.mark.parametrize(
    "opt,path,why",
    [
        ("--audit-html", "/proc/x.html", "cannot write in /proc"),
        ("--audit-markdown", "no-such-dir/x.md", "does not exist"),
        ("--audit-leaderboard", "board.txt", "must end in .md, .csv, .html"),
    ],
)
def test_bad_output_paths_fail_before_the_audit(pytester, tmp_path, opt, path, why):
    d = write(simulate(demo_spec(items_per_benchmark=20)), tmp_path / "demo")
    res = pytester.runpytest("--audit", str(d), opt, path, *ARGS)
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    assert why in res.stderr.str()
    assert "leaderboard audit" not in res.stdout.str()  # no audit ran


def test_records_usage_errors_print_real_newlines(pytester, tmp_path):
    d = tmp_path / "bad"
    d.mkdir()
    (d / "notes.txt").write_text("x")
    res = pytester.runpytest("--audit", str(d), *ARGS)
    err = res.stderr.str()
    assert "\\n" not in err and "invalid records:\n" in err


@pytest.mark.slow
def test_audit_never_writes_into_the_records(pytester, tmp_path, monkeypatch):
    """``cd records && pytest --audit .`` with no pytest configuration: the records are the rootdir,
    and pytest's cache used to land in them (``.pytest_cache/``)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    import sys

    d = write(simulate(demo_spec(items_per_benchmark=20)), tmp_path / "records")
    before = sorted(p.relative_to(d) for p in d.rglob("*"))
    monkeypatch.chdir(d)  # the run's working directory: no pytest configuration above it
    res = pytester.run(sys.executable, "-m", "pytest", "--audit", ".", "--audit-boot", "200", "-q")
    assert res.ret == 1  # the demo fails checks, so pytest's cache has something to write
    assert sorted(p.relative_to(d) for p in d.rglob("*")) == before
    assert list((tmp_path / "xdg" / "leaderboard-audit" / "pytest-cache").iterdir())  # it went here


def test_a_folder_with_one_records_table_is_accepted(pytester, tmp_path):
    d = tmp_path / "one"
    d.mkdir()
    board_table(d / "records.csv", 4, 20)
    res = pytester.runpytest("--audit", str(d), "--audit-boot", "200", *ARGS)
    assert res.ret in (0, 1), res.stderr.str()
    assert "4 models, 20 items, 1 config" in " ".join(res.stdout.str().split())  # wrapped at the path


@pytest.mark.slow
def test_cli_summary_points_to_the_cli_flags(capsys):
    from leaderboard_audit.cli.main import main

    demo = REPO / "fixtures" / "demo"
    main(["audit", str(demo), "--boot", "200"])
    out = capsys.readouterr().out
    assert "--audit-summary full" not in out  # the CLI has no such option
    assert "--leaderboard PATH" in out


def test_leaderboard_html_is_one_safe_file(board):
    from leaderboard_audit.reports.html_script import SCRIPT_HASH

    text = render_leaderboard(board, "board.HTML")  # the suffix, case-insensitively
    assert text.startswith("<!DOCTYPE html>") and f"script-src '{SCRIPT_HASH}'" in text
    assert text.count("<script>") == 1 and "http" not in text.replace("http-equiv", "")
    assert text.count("<tr>") == 151 and '<table class="dt">' in text  # header + every model, paged


@pytest.mark.slow
def test_no_cacheprovider_with_the_records_as_rootdir_warns_nothing(pytester, tmp_path, monkeypatch):
    """docs/records.md recommends ``-p no:cacheprovider``: with the records as the rootdir the
    plugin used to set ``cache_dir`` anyway, an unknown ini key then, so pytest warned, and
    ``-W error`` crashed (INTERNALERROR, exit 3; UX review 2026-12-04 #17)."""
    import sys

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    d = write(simulate(demo_spec(items_per_benchmark=20)), tmp_path / "records")
    monkeypatch.chdir(d)
    res = pytester.run(
        sys.executable, "-m", "pytest", "--audit", ".", "--audit-boot", "200", "-q", "-p", "no:cacheprovider",
        "-W", "error", "--tb=no",
    )  # fmt: skip
    out = res.stdout.str() + res.stderr.str()
    assert res.ret == 1, out[-3000:]  # the demo's fails, not an internal error
    assert "cache_dir" not in out and "INTERNALERROR" not in out
    assert not (tmp_path / "xdg" / "leaderboard-audit" / "pytest-cache").exists()  # no pytest cache anywhere
