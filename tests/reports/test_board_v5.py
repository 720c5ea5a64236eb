"""The board and the pair fields after the 2026-12-07 reviews (issue 54 items 3 and 4; docs/audits.md
"The board", AUDITS v5).

* U6: the score CI is Wilson-type, never of width 0 where there are items, and said to be marginal.
* U5 / M2: the count columns and their JSON fields say what they count (the models *below* a row).
* M1: ``pairs[].manufactured`` only where some configuration reverses the pair beyond sampling.
* M9: no "share" above 1 in a pair verdict's evidence or message.
* M13: no chance count of 'identified' pairs when none is identified.
* M14: the gate workflow's actions are pinned by full commit SHA.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from helpers.paths import REPO
from leaderboard_audit import audit, load_records
from leaderboard_audit.engine import audit_scopes
from leaderboard_audit.records.grid import Config, Grid
from leaderboard_audit.records.model import Items, Records
from leaderboard_audit.reports.html import pair_word, render_html
from leaderboard_audit.reports.leaderboard import HEADERS, render_csv, render_md
from leaderboard_audit.reports.leaderboard_rows import BELOW, BELOW_ROBUST, rows_of
from leaderboard_audit.reports.next_steps import multiplicity_line, pair_lines


@pytest.fixture(scope="module")
def demo() -> dict:
    return audit(load_records(REPO / "fixtures" / "demo"), n_boot=200)


def one_config(C: np.ndarray) -> Records:
    M, N = C.shape
    grid = Grid((Config("gen|letter_plain|p0", "gen", "letter_plain", "p0", None),), "gen|letter_plain|p0")
    items = Items(
        np.array(["b"] * N, dtype=object),
        np.array([f"b/{i}" for i in range(N)], dtype=object),
        [0] * N,
        [None] * N,
        [None] * N,
    )
    return Records(correct=C[:, :, None], models=tuple(f"m{j}" for j in range(M)), items=items, grid=grid, source="sim")


# -- U6: the score CI ------------------------------------------------------------------------


def test_a_model_right_on_every_item_gets_an_interval_of_nonzero_width():
    rng = np.random.default_rng(0)
    C = rng.random((5, 102)) < np.linspace(0.95, 0.6, 5)[:, None]
    C[0] = True  # 102 of 102: the review's AA051611/V0201
    C[4] = False  # and none
    s = audit_scopes(one_config(C), ["b"], n_boot=100)["b"]
    board = s["averaged"]["board"]
    assert board["ci_kind"] == "marginal"
    for r in board["rows"]:
        assert r["ci"][0] < r["ci"][1] and r["ci"][0] <= r["averaged"] <= r["ci"][1]
    rows = {r["model"]: r for r in rows_of(s)[0]}
    assert rows["m0"]["score"] == "1.000" and rows["m0"]["95% CI"] == "0.964-1.000"  # Wilson, as the review asks
    assert rows["m4"]["95% CI"] == "0.000-0.036"
    assert rows["m0"]["reference"] == "1.000 (0.964-1.000)"  # the same interval as the reference column's


def test_the_notes_say_the_interval_is_marginal(demo):
    for s in (demo["scopes"]["pooled"], audit_scopes(one_config(np.eye(4, 30, dtype=bool)), ["b"], n_boot=100)["b"]):
        text = " ".join(rows_of(s)[1])
        assert "marginal: one interval per model, not simultaneous over the board" in text
        assert s["averaged"]["board"]["ci_kind"] == "marginal"


# -- U5 / M2: what the counts count ----------------------------------------------------------


def test_the_board_json_names_what_it_counts(demo):
    for s in demo["scopes"].values():
        rows = s["averaged"]["board"]["rows"]
        M = len(rows)
        for r in rows:
            assert "identified_above" not in r and "identified_below" not in r
            best, worst = r["rank_interval"]
            assert best == 1 + r["models_above"] <= r["rank"] <= worst  # the rule as the notes state it
            assert r["models_below"] == M - worst
        assert sum(r["models_above"] for r in rows) == sum(r["models_below"] for r in rows)
    top = demo["scopes"]["pooled"]["averaged"]["board"]["rows"][0]
    # the planted twins share rank 1: neither is separated above the other
    assert (top["rank"], top["models_above"], top["models_below"]) == (1, 0, 4)


def test_the_count_columns_count_the_models_below(demo):
    assert BELOW in HEADERS and BELOW_ROBUST in HEADERS
    assert not any("above" in h for h in HEADERS)  # the rule counts those above; no column does
    s = demo["scopes"]["pooled"]
    rows, notes = rows_of(s)
    board = {r["model"]: r for r in s["averaged"]["board"]["rows"]}
    below_robust = s["identified"]["above_count"]
    for r in rows:
        assert int(r[BELOW]) == board[r["model"]]["models_below"]
        assert int(r[BELOW_ROBUST]) == below_robust[r["model"]]
    assert (rows[0]["rank"], rows[0][BELOW]) == ("1=", "4") and rows[-1][BELOW] == "0"
    text = " ".join(notes)
    assert "rank = the best rank of its interval (1 + the models separated above it)" in text
    assert f"{BELOW} = how many models this one is separated above" in text
    assert f"{BELOW_ROBUST} = how many models the paper's comparison" in text and "identifies this one above" in text
    assert "identifies above this one" not in text  # the v4 note said the opposite of the column
    md = render_md(demo)
    assert f"| {BELOW} | {BELOW_ROBUST} | configs won |" in md
    assert render_csv(demo).splitlines()[0].count(f'"{BELOW}"') == 1
    section = render_html(demo).split('<section id="models">', 1)[1].split("</section>", 1)[0]
    assert f"<th>{BELOW}</th>" in section and "identified above<" not in section


def test_an_incomplete_board_gets_the_same_column_names():
    """The incomplete-grid rows (``_rows_incomplete``, estimated from the design's item sample) come
    under the v5 names too, counting the models below from ``models_below``."""

    def model(m: str, rank: int) -> dict:
        box = {"min": [0.4, 0.5], "max": [0.5, 0.6], "robust": [0.1, 0.3], "averaged": [0.4, 0.6]}
        return {"model": m, "rank": rank, "reference": 0.5, "reference_items": 1, "bounds": box}

    def row(m: str, rank: int, above: int, below: int) -> dict:
        return {
            "model": m,
            "rank": rank,
            "models_above": above,
            "models_below": below,
            "averaged": 0.5,
            "ci": [0.3, 0.7],
        }

    s = {
        "n_items": 2,
        "n_models": 2,
        "n_configs": 2,
        "leaderboard": [model("a", 1), model("b", 2)],
        "incomplete": {"cells": 8, "missing": 2},
        "averaged": {
            "estimated_from": {"design": "uniform", "items": 1, "of": 2},
            "board": {"alpha": 0.05, "ci_kind": "marginal", "rows": [row("a", 1, 0, 1), row("b", 2, 1, 0)]},
        },
    }
    rows, _ = rows_of(s)
    assert all(set(HEADERS) <= set(r) for r in rows)
    assert [r[BELOW] for r in rows] == ["1", "0"]
    assert f"| {BELOW} | {BELOW_ROBUST} |" in render_md({"scopes": {"pooled": s}})


# -- M1: manufactured = a configuration reverses the pair beyond sampling ----------------------


def test_manufactured_only_where_a_configuration_reverses_beyond_sampling(demo):
    pairs = [p for s in demo["scopes"].values() for p in s["pairs"]]
    for p in pairs:
        assert p["manufactured"] == (p["cause"] == "harness")
        assert (p["cause"] is not None) == (p["gap_items"] != 0 and p["robust_tie"])
        if p["manufactured"]:
            assert p["reversing_significant"] >= 1
    not_decidable = [p for p in pairs if p["cause"] == "undecidable"]
    assert not_decidable and not any(p["manufactured"] for p in not_decidable)
    # v4 called these manufactured: reversed by 14 of 26 configurations, none beyond item sampling
    assert any(p["reversing"] > 0 and p["reversing_significant"] == 0 for p in not_decidable)
    assert not any(p["manufactured"] for p in pairs if p["reversing"] == 0)


def test_the_readers_of_manufactured_still_name_every_cause(demo):
    s = demo["scopes"]["truthfulqa"]  # undecidable and sampling pairs, none manufactured
    assert not any(p["manufactured"] for p in s["pairs"])
    head = pair_lines(s)[0]
    assert "2 not decidable on robust items" in head and "1 too close to call on the robust items" in head
    assert "manufactured" not in head and "not identified" not in head
    words = {pair_word(p, s["n_configs"]) for p in s["pairs"]}
    assert {"not decidable on robust items", "too few robust items (sampling)"} <= words
    v = {x["id"]: x for x in s["verdicts"]}
    assert "not decidable on robust items" in v["manufactured[truthfulqa-atlas-70b-instruct>atlas-70b]"]["message"]


# -- M9: no share above 1 ----------------------------------------------------------------------


def test_pair_evidence_has_no_share_above_one(demo):
    verdicts = [v for s in demo["scopes"].values() for v in s["verdicts"] if v["check"] == "manufactured"]
    seen = []
    for v in verdicts:
        ev = v["evidence"]
        assert "fragile_share" not in ev
        seen.append(ev["fragile_to_gap"])
        for k, x in ev.items():
            if "share" in k and isinstance(x, (int, float)):
                assert 0 <= x <= 1, (v["id"], k, x)
        for share in re.findall(r"fragile share (-?[0-9.]+)", v["message"]):
            assert 0 <= float(share) <= 1, v["message"]
    assert 3.0 in seen and -0.5 in seen  # the demo's mmlu pairs (3.0) and a truthfulqa pair (-0.5)
    v = next(x for x in verdicts if x["id"] == "manufactured[mmlu-cirrus-3b-dpo>borealis-8b]")
    assert "the fragile items carry 3.0x the gap (the robust items favour the lower model)" in v["message"]


# -- M13: no chance count without a claim ------------------------------------------------------


def _pairs(identified: list[str | None]) -> dict:
    return {
        "pairs": [
            {"identified": side, "board_tests": 40, "gap_items": 1, "robust_tie": side is None} for side in identified
        ]
    }


def test_no_chance_count_when_no_pair_is_identified():
    line = multiplicity_line(_pairs([None] * 4277))
    assert "by chance" not in line and line.endswith("; no adjacent pair is identified")
    assert "Holm over the board's 40 claims" in line
    line = multiplicity_line(_pairs([None] * 99 + ["higher"]))
    assert "'identified' is unadjusted (~5.0 of 100 by chance)" in line


# -- M14: actions pinned by commit -------------------------------------------------------------


def test_the_gate_workflow_pins_its_actions_by_full_commit_sha():
    text = (REPO / ".github" / "workflows" / "audit-gate.yml").read_text()
    uses = re.findall(r"^\s*-?\s*uses:\s*(\S+)(.*)$", text, re.M)
    assert uses
    for ref, comment in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", ref), ref  # a tag can be moved; a commit cannot
        assert re.fullmatch(r"\s*# v\d+(\.\d+)*", comment), comment  # the tag it was, for the reader
