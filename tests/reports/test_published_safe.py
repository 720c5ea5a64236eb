"""Published files are safe to open (issue 46): the leaderboard CSV neutralises formulas the OWASP
way (C03) and a carriage return cannot split its rows (C04); the sticky PR comment cannot mention
anyone (C09); names with control or invisible characters, mixed scripts or lookalike letters are
refused when the records are read, and the format characters that remain allowed are written
escaped in every output (C10)."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import unicodedata
from pathlib import Path

import pytest

from leaderboard_audit.records import RecordsError, load_records
from helpers.paths import REPO

TINY = REPO / "fixtures" / "tiny"
Q = ("-p", "no:cacheprovider", "-q")
FORMULAS = [
    "=1+cmd|' /C calc'!A0",
    '-1+HYPERLINK("http:__evil.example","click")',
    "@1+SUM(A1)",
    "+1+cmd|' /C notepad'!A0",
]


def board_of(tmp_path: Path, names: list[str]) -> Path:
    """fixtures/tiny with one model file per name (the three real models' lines, in turn)."""
    out = tmp_path / "recs"
    (out / "tiny").mkdir(parents=True)
    shutil.copy(TINY / "grid.json", out)
    bases = ["alpha", "beta", "gamma"]
    for i, name in enumerate(names):
        rows = [json.loads(x) for x in (TINY / "tiny" / f"{bases[i % 3]}.jsonl").read_text().splitlines()]
        with open(out / "tiny" / (name.replace("/", "__") + ".jsonl"), "w") as f:
            for o in rows:
                o["model"] = name
                if i >= 3:
                    o["correct"] = {k: (v if (i + len(k)) % 3 else 1 - v) for k, v in o["correct"].items()}
                f.write(json.dumps(o) + "\n")
    return out


def test_formula_names_are_neutralised_in_the_published_csv(pytester, tmp_path):
    """C03: d0b4150 exempted a sign followed by a digit, so these four were written raw."""
    recs = board_of(tmp_path, [*FORMULAS, "plain"])
    board = tmp_path / "board.csv"
    r = pytester.runpytest(f"--audit={recs}", "--audit-leaderboard", str(board), *Q)
    assert r.ret in (0, 1)
    rows = list(csv.reader(io.StringIO(board.read_text(), newline="")))
    names = {row[1] for row in rows[1:]}
    assert names == {"'" + n for n in FORMULAS} | {"plain"}
    for row in rows[1:]:
        for cell in row:
            assert not cell.startswith(("=", "+", "@", "\t", "\r")), row
            assert not cell.startswith("-") or cell == "-" or re.fullmatch(r"-[0-9.]+", cell), row
    assert all(line.startswith('"') for line in board.read_text().splitlines())  # every field quoted


def test_a_carriage_return_cannot_start_a_csv_row():
    """C04: ``ok\\r=2+cmd`` was written unquoted; a CSV reader saw a second row whose first cell
    was the formula. Names with a CR are refused when read (below); the writer holds on its own."""
    from leaderboard_audit.reports.leaderboard import render_csv

    name = "ok\r=2+cmd|' /C calc'!A0"
    report = {
        "scopes": {
            "pooled": {
                "n_items": 8,
                "n_configs": 1,
                "leaderboard": [{"model": name, "reference": 0.5, "min": 0.5, "max": 0.5, "robust": 0.5}],
            }
        }
    }
    text = render_csv(report)
    assert "\r" not in text
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == 2 and rows[1][1] == "ok\\r=2+cmd|' /C calc'!A0"


@pytest.mark.parametrize(
    "name, why",
    [
        ("ok\r=2+cmd", r"holds a control character \('\\r'\)"),
        ("tab\tname", r"holds a control character \('\\t'\)"),
        ("\u0430tlas-70b", "mixes the scripts CYRILLIC, LATIN"),
        ("atlas-70b\u3164", r"holds an invisible or unassigned character \('\\u3164'\)"),
        ("atlas\ufe0f-70b", "invisible"),
        ("x\u2800", "invisible"),
    ],
)
def test_names_that_cannot_be_shown_faithfully_are_refused(tmp_path, name, why):
    recs = board_of(tmp_path, ["atlas-70b", name, "dune-1b"])
    with pytest.raises(RecordsError, match=why):
        load_records(recs)


def test_lookalikes_from_another_script_are_refused(tmp_path):
    """C10: a whole-script Cyrillic name that prints as a Latin one (``аре`` / ``ape``)."""
    recs = board_of(tmp_path, ["ape", "\u0430\u0440\u0435", "dune-1b"])
    with pytest.raises(RecordsError, match="look alike"):
        load_records(recs)


def test_the_review_s_three_lookalikes_exit_4_under_pytest(pytester, tmp_path):
    recs = board_of(tmp_path, ["atlas-70b", "\u0430tlas-70b", "atlas-70b\u3164"])
    r = pytester.runpytest(f"--audit={recs}", "--audit-leaderboard", str(tmp_path / "b.md"), *Q)
    assert r.ret == 4
    err = r.stderr.str()
    assert "'\\u0430tlas-70b' mixes the scripts" in err and "'atlas-70b\\u3164' holds an invisible" in err


@pytest.mark.parametrize(
    "name",
    ["Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-72B", "caf\u00e9-7b", "\u6771\u4eac-llm-7b", "GPT-4o-\u65e5\u672c\u8a9e"],
)
def test_ordinary_names_in_any_script_are_accepted(tmp_path, name):
    recs = board_of(tmp_path, ["atlas-70b", name, "dune-1b"])
    assert name in load_records(recs).models


def test_format_characters_that_remain_allowed_are_escaped_in_every_output(tmp_path):
    """Bidi controls and zero-width characters (Unicode Cf) are allowed in names (B20), and no
    output holds one raw: terminal, Markdown, HTML, CSV and the JSON report."""
    from leaderboard_audit.engine import audit
    from leaderboard_audit.reports.html import render_html
    from leaderboard_audit.reports.leaderboard import render_csv, render_md
    from leaderboard_audit.reports.markdown import render_markdown
    from leaderboard_audit.reports.terminal import render_summary

    recs = board_of(tmp_path, ["atlas-70b", "\u202eevil\u202c-bidi", "zero\u200bwidth"])
    report = audit(load_records(recs), n_boot=50)
    outs = {
        "markdown": render_markdown(report),
        "html": render_html(report),
        "csv": render_csv(report),
        "board.md": render_md(report),
        "json": json.dumps(report),
        "terminal": render_summary(
            report, [v for sc in report["scopes"].values() for v in sc["verdicts"]], detail="full"
        ),
    }
    for kind, text in outs.items():
        assert not any(unicodedata.category(ch) in ("Cf", "Cc") and ch not in "\n" for ch in text), kind


def test_the_gate_comment_cannot_mention_anyone(tmp_path):
    """C09: a model file ``x,@org__security-team.jsonl`` put 51 ``@org/security-team`` mentions
    in the sticky PR comment."""
    from leaderboard_audit.reports.markdown import md, render_markdown

    assert md("x,@org/security-team") == "x,&#64;org/security-team"
    assert md("@user [x](http://evil.example) <img src=x>").count("@") == 0
    recs = board_of(tmp_path, ["atlas-70b", "x,@org/security-team", "dune-1b"])
    from leaderboard_audit.engine import audit

    report = audit(load_records(recs), n_boot=50)
    assert not re.search(r"@[A-Za-z0-9]", render_markdown(report))


def test_the_gate_refuses_an_at_sign_in_a_file_name(tmp_path):
    from leaderboard_audit.plugin.guard import not_data

    recs = board_of(tmp_path, ["atlas-70b", "x,@org/security-team", "dune-1b"])
    found = not_data(recs)
    assert len(found) == 1 and "x,@org__security-team.jsonl: a name with characters outside" in found[0]


def test_the_submission_comment_holds_no_mention(pytester, tmp_path):
    recs = board_of(tmp_path, ["atlas-70b", "x,@org/security-team", "dune-1b"])
    md_file = tmp_path / "gate.md"
    r = pytester.runpytest(
        f"--audit={recs}", "--audit-submission=x,@org/security-team", "--audit-markdown", str(md_file), *Q
    )
    assert r.ret in (0, 1)
    text = md_file.read_text()
    assert "&#64;org/security" in text and not re.search(r"@[A-Za-z0-9]", text)
