"""fixtures/release: the paper's release shape audits exactly like its records-v1 twin."""

from __future__ import annotations

import importlib.util
import json
import warnings

import numpy as np

from leaderboard_audit import audit
from leaderboard_audit.records import InferredLayoutWarning, load_records
from leaderboard_audit.records.grid import PAPER_ORDERINGS
from leaderboard_audit.engine import dumps_report
from helpers.paths import REPO

RELEASE = REPO / "fixtures" / "release"


def load_release():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rec = load_records(RELEASE / "records")
    return rec, [w for w in caught if issubclass(w.category, InferredLayoutWarning)]


def test_release_loads_equal_to_its_records_v1_twin():
    rec, layout_warnings = load_release()
    twin = load_records(RELEASE / "records-v1")
    assert rec.equals(twin)
    assert rec.shape == (6, 60, 26)
    assert not rec.grid.inferred and rec.grid.reference == "gen|letter_plain|p0"
    assert rec.unparsed is not None and rec.unparsed.shape == (6, 60) and (rec.unparsed >= 0).all()
    cloze = rec.grid.index("ll|cloze_plain")
    assert not np.isnan(rec.margin[:, :, cloze]).any()
    assert np.isnan(np.delete(rec.margin, cloze, axis=2)).all()
    # printed once: one warning, one layout note, nothing in the data notes
    assert len(layout_warnings) == 1 and len(rec.layout_notes) == 1 and rec.notes == ()
    note = rec.layout_notes[0]
    example = "'arc_atlas-70b-instruct.jsonl' -> 'atlas-70b-instruct'"
    for said in (
        "legend read from legend.json",
        "flat layout",
        example,
        "'bits' read as 'correct'",
        "margin['ll|cloze_plain']",
    ):
        assert said in note
    assert twin.layout_notes == ()


def test_release_lines_are_the_papers_description():
    """The fixture holds what A.1 lists and nothing from records-v1 (no `correct`, no `model`)."""
    files = sorted((RELEASE / "records").glob("*.jsonl"))
    assert len(files) == 24 and not [p for p in (RELEASE / "records").iterdir() if p.is_dir()]
    line = json.loads(files[0].read_text().splitlines()[0])
    assert set(line) == {"benchmark", "item_id", "question", "gold", "bits", "margin", "n_unparsed"}
    assert len(line["bits"]) == 26 and isinstance(line["margin"], float)
    legend = json.loads((RELEASE / "records" / "legend.json").read_text())
    assert len(legend) == 26
    assert {k.split("|")[2]: tuple(v) for k, v in legend.items() if k.startswith("gen|")} == PAPER_ORDERINGS


def test_audit_report_is_byte_identical_to_the_twin_apart_from_path_and_hash():
    rec, _ = load_release()
    twin = load_records(RELEASE / "records-v1")
    reports = [audit(rec, path=str(RELEASE / "records")), audit(twin, path=str(RELEASE / "records-v1"))]
    assert reports[0]["records"]["sha256"] != reports[1]["records"]["sha256"]
    for r in reports:
        r["records"]["path"] = "<records>"
        r["records"]["sha256"] = "<sha256>"
        r["records"]["layout_notes"] = []  # what the reader inferred about the release's layout
    texts = [dumps_report(r) for r in reports]
    assert texts[0] == texts[1]
    assert '"scopes"' in texts[0] and len(texts[0]) > 10_000


def test_make_release_reproduces_the_committed_bytes(tmp_path):
    spec = importlib.util.spec_from_file_location("make_release", RELEASE / "make_release.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    for folder in ("records", "records-v1"):
        made = {
            p.relative_to(tmp_path / folder): p.read_bytes()
            for p in sorted((tmp_path / folder).rglob("*"))
            if p.is_file()
        }
        committed = {
            p.relative_to(RELEASE / folder): p.read_bytes()
            for p in sorted((RELEASE / folder).rglob("*"))
            if p.is_file()
        }
        assert made == committed, folder


def test_pytest_audit_on_the_release_gives_the_twins_outcomes(pytester):
    """`pytest --audit <release>/records` (the README's command) runs the checks, same outcomes as the twin."""
    outcomes = []
    for folder in ("records", "records-v1"):
        result = pytester.runpytest(f"--audit={RELEASE / folder}", "-q", "-k", "champions or band")
        assert result.ret == 1  # the simulated demo fails on purpose
        outcomes.append(result.parseoutcomes())
    assert outcomes[0] == outcomes[1]
    counted = sum(outcomes[0].get(k, 0) for k in ("passed", "failed", "warn"))
    assert counted == 5 + 5 * 6  # champions + 6 bands, 5 scopes
