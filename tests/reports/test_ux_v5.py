"""UX review 2026-12-07: M11 (raw Markdown escapes), issue 54 (no zero-width interval where
n > 0), M12 (backticks in the HTML next steps), M6 (terminal width, gate ids never cut),
M10 (the gate's PR comment) and M4 (the Arena exploit wording)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from helpers.paths import REPO
from leaderboard_audit.engine import audit, dumps_report
from leaderboard_audit.engine.gate import with_gate
from leaderboard_audit.records import load_records
from leaderboard_audit.reports import html as html_mod
from leaderboard_audit.reports import markdown as md_mod
from leaderboard_audit.reports.markdown import gate_markdown, md, md_with_code, render_markdown
from leaderboard_audit.reports.submission_text import render_submission_text
from leaderboard_audit.records.simulate import demo_spec, simulate

FIXTURES = {
    "tiny": REPO / "fixtures" / "tiny",
    "demo": REPO / "fixtures" / "demo",
    "real": REPO / "fixtures" / "real",
    "release": REPO / "fixtures" / "release" / "records",
}


@pytest.fixture(scope="module")
def gated() -> dict:
    r = simulate(demo_spec(items_per_benchmark=60))
    return with_gate(audit(r, n_boot=200), r, ["borealis-8b"], n_boot=200)


# --- M11: escape only what Markdown acts on ---------------------------------------------


def test_md_leaves_hyphens_apostrophes_and_inner_underscores_alone():
    assert md("borealis-8b isn't bt_ties_dropped (0.5)") == "borealis-8b isn't bt_ties_dropped (0.5)"


def test_md_escapes_what_would_start_a_block_at_a_line_start():
    assert md("- item") == "\\- item"
    assert md("+ item") == "\\+ item"
    assert md("# heading") == "\\# heading"
    assert md("1. first") == "1\\. first" and md("0.5 of them") == "0.5 of them"
    assert md("===") == "\\=\\=\\=" and md("a - b") == "a - b" and md("-0.213") == "-0.213"


def test_md_keeps_hostile_names_inert():
    assert md("a|b") == "a\\|b"
    assert md("_em_ *strong* `code` ~~x~~ $x$") == "\\_em\\_ \\*strong\\* \\`code\\` \\~\\~x\\~\\~ \\$x\\$"
    assert md("[x](http://evil.example)") == "\\[x\\](http://evil.example)"
    assert md("<img src=x> & @org/team #12") == "&lt;img src=x&gt; &amp; &#64;org/team \\#12"
    assert "&#x27;" not in md("it's") and "&quot;" not in md('"q"')


def test_markdown_report_has_no_escaped_hyphen_or_apostrophe_entity(gated):
    text = render_markdown(gated)
    assert "\\-" not in text and "&#x27;" not in text
    assert "submission borealis-8b: FAIL" in text


def test_markdown_renders_hostile_text_inert_if_markdown_it_is_installed():
    mdit = pytest.importorskip("markdown_it")
    out = (
        mdit.MarkdownIt("commonmark")
        .enable("table")
        .render(md("x [a](http://e.x) <img src=x> *b* _c_ `d` - e") + "\n\n- " + md("# not a heading"))
    )
    assert "<a " not in out and "<img" not in out and "<em>" not in out and "<code>" not in out
    assert "<h1>" not in out


# --- issue 54: no interval of zero width where n > 0 ---------------------------------------


def _is_interval_key(k: str) -> bool:
    """CIs: ``ci``, ``*_ci``, ``interval``. A ``rank_interval`` is a set of integer ranks ([4, 4]: rank 4
    for sure), not an interval estimate, and is not scanned."""
    return k in ("ci", "interval") or k.endswith("_ci")


def zero_width(o, path=(), under=False, parent=None) -> list[tuple[str, list, dict]]:
    """Every zero-width interval in a report's JSON, with the n-like keys beside it."""
    out = []
    if isinstance(o, dict):
        for k, v in o.items():
            out += zero_width(v, (*path, str(k)), _is_interval_key(str(k)), o)
    elif isinstance(o, list):
        nums = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in o)
        if under and len(o) == 2 and nums:
            if o[1] - o[0] <= 0:
                ns = {k: parent.get(k) for k in ("n", "robust_items", "n_items") if k in (parent or {})}
                out.append(("/".join(path), o, ns))
            return out
        for j, v in enumerate(o):
            out += zero_width(v, (*path, str(j)), under, parent if under else None)
    return out


# demo and real: whole audits, about 5 s each (the slow tier)
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in ("demo", "real") else n for n in FIXTURES]
)
def test_no_zero_width_interval_where_n_is_positive(name):
    report = json.loads(dumps_report(audit(load_records(FIXTURES[name]), n_boot=300)))
    found = [(p, iv, ns) for p, iv, ns in zero_width(report) if not ns or any((v or 0) > 0 for v in ns.values())]
    assert not found, found[:10]
    for s in report["scopes"].values():  # n == 0: null, with the reason
        for p in s.get("pairs") or []:
            if not p["robust_items"]:
                assert p["ci"] is None and p["ci_method"].startswith("none: no jointly robust items")


def test_degenerate_paired_difference_gets_a_score_interval():
    from leaderboard_audit.metrics.bootstrap import paired_sign_bootstrap_ci

    ci = paired_sign_bootstrap_ci(
        np.array([0, 9, 0, 5]), np.array([0, 0, 4, 3]), np.array([326, 9, 4, 40]), 500, np.random.default_rng(0)
    )
    assert np.all(ci[:, 1] > ci[:, 0])
    assert ci[0, 0] < 0 < ci[0, 1] and ci[0, 1] == pytest.approx(0.0116, abs=1e-4)  # 0 of 326 discordant
    assert ci[1, 1] == 1.0 and ci[2, 0] == -1.0  # every item discordant one way: the point is an end


@pytest.mark.slow
def test_the_demo_robust_tie_pair_says_how_its_ci_was_made():
    report = audit(load_records(FIXTURES["demo"]), n_boot=300)
    pair = next(p for p in report["scopes"]["pooled"]["pairs"] if p["higher_only"] == p["lower_only"] == 0)
    assert pair["ci"][0] < 0 < pair["ci"][1] and pair["ci_method"].startswith("Wilson score")


# --- M12: backticks as code ------------------------------------------------------------------


def test_html_next_steps_render_backticks_as_code(gated, monkeypatch):
    monkeypatch.setattr(html_mod, "next_steps", lambda r: ["collect with `leaderboard-audit collect SPEC.toml` <now>"])
    sec = html_mod.next_section(gated)
    assert "<code>leaderboard-audit collect SPEC.toml</code>" in sec and "`" not in sec and "&lt;now&gt;" in sec


def test_markdown_next_steps_keep_backticks_as_code_spans(gated, monkeypatch):
    monkeypatch.setattr(md_mod, "next_steps", lambda r: ["collect with `leaderboard-audit collect SPEC.toml` *now*"])
    text = "\n".join(md_mod.next_md(gated))
    assert "- collect with `leaderboard-audit collect SPEC.toml` \\*now\\*" in text
    assert md_with_code("`<img src=x>` and `@org`") == "\\`&lt;img src=x&gt;\\` and \\`&#64;org\\`"


# --- M6: terminal width --------------------------------------------------------------------


@pytest.mark.parametrize("columns", [80, pytest.param(120, marks=pytest.mark.slow)])  # a demo audit each
def test_cli_summary_fits_the_terminal_width(columns, monkeypatch, capsys):
    from leaderboard_audit.cli.main import main

    monkeypatch.setenv("COLUMNS", str(columns))
    main(["audit", str(FIXTURES["demo"]), "--boot", "200"])
    lines = capsys.readouterr().out.splitlines()
    assert lines and max(len(x) for x in lines) <= columns, max(lines, key=len)


def test_board_columns_are_left_out_before_a_line_runs_past_the_width(gated):
    from leaderboard_audit.reports.terminal import fit_columns, render_table
    from leaderboard_audit.checks import registry
    from leaderboard_audit.checks.tables import kind_of

    s = gated["scopes"]["pooled"]
    board = next(t for t in registry()["band"].tables("pooled", s) if kind_of(t) == "table")
    cut, left = fit_columns(board, 70)
    assert left and cut.headers[:3] == board.headers[:3]
    assert max(len(x) for x in render_table(cut).splitlines()) <= 70


def test_the_gate_table_never_cuts_a_verdict_id(gated):
    report = json.loads(json.dumps(gated))
    long_id = "manufactured[pooled-llama-30b>org/llama-30b-twin-of-a-rather-long-name]"
    row = next(r for s in report["submission_audit"]["scopes"].values() for r in s["rows"])
    row["id"] = long_id
    assert long_id in render_submission_text(report, width=80)


# --- M10: the gate's PR comment --------------------------------------------------------------


def test_the_gate_comment_has_a_narrow_verdict_table_and_the_messages_below(gated):
    text = gate_markdown(gated)
    section = text[text.index("Verdicts that concern the newcomer") :]
    section = section[: section.find("\n#", 1)] if "\n#" in section[1:] else section
    head = next(x for x in section.splitlines() if x.startswith("| "))
    assert head == "| verdict | status | without it | effect | margin |"
    rows = [x for x in section.splitlines() if x.startswith("| ") and x != head]
    items = [x for x in section.splitlines() if x.startswith("- ")]
    assert rows and len(items) >= len(rows)
    longest = max(len(c.strip()) for x in rows for c in re.split(r"(?<!\\)\|", x)[2:-1])
    assert longest <= 40  # the cells after the id: short labels, never a message
    assert "audit-strict" in text
    assert all(text[m.start() - 3 : m.start()] == "`--" for m in re.finditer("audit-strict", text))


# --- M4: the Arena exploit wording -----------------------------------------------------------


def _flag(model: str, config: str) -> dict:
    return {
        "model": model,
        "as": "top-3",
        "config": config,
        "rank_elsewhere": {"win_share": 4, "bt_ties_dropped": 6},
        "rival": "other",
        "lead": 0.02,
        "interval": [0.01, 0.03],
        "flagged": True,
    }


def test_the_arena_exploit_is_worded_as_the_opponent_mix():
    from leaderboard_audit.arena.audit import exploit_step, exploit_text

    e = _flag("gemini-1.5-pro-api-0409-preview", "mean_pairwise")
    report = {
        "kind": "arena",
        "opponents": {e["model"]: 12},
        "scores": {"mean_pairwise": {"a": 0.8, "b": 0.7, e["model"]: 0.65, "c": 0.5}},
    }
    for text in (exploit_text(e, report), exploit_step(e, report)):
        assert "constant answer" not in text and "gamed" not in text and "{" not in text
        assert "opponent mix" in text and "12 opponents" in text
        assert "mean_pairwise 3, win_share 4, bt_ties_dropped 6" in text
    table = {"kind": "table", "scores": {}}
    assert "constant answer" in exploit_step(e, table)
    assert "{" not in exploit_text(e, table)


def test_the_published_board_names_records_without_the_local_directory_layout():
    """Issue 57: "Made by ... from records /home/<user>/..." carried the maintainer's layout; an
    absolute path is named by its last component (the SHA-256 identifies the content), a relative
    one as it was given."""
    from leaderboard_audit.reports.leaderboard import provenance, public_path

    assert public_path("/home/alice/boards/arc-2026") == "arc-2026"
    assert public_path("records/arc") == "records/arc"
    assert public_path(None) == "-"
    line = provenance({"records": {"path": "/home/alice/boards/arc-2026", "sha256": "ab" * 32}, "seed": 1})
    assert "/home/alice" not in line and "arc-2026" in line and "sha256 abababab" in line
