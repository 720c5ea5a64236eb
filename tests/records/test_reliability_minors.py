"""Issue 25's minors that live in the records and the reports: a layout one added file flipped
(B18), NFC/NFD-confusable names (B19), bidi controls in Markdown/HTML (B20), unbounded name
lengths (B22), empty report paths (B23) and several records problems on one line (B38)."""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

import pytest

from leaderboard_audit.records import RecordsError, load_records
from helpers.paths import REPO

TINY = REPO / "fixtures" / "tiny"
RELEASE = TINY.parent / "release" / "records"
Q = ("-p", "no:cacheprovider")


def _rewrite(f: Path, fn) -> None:
    rows = [json.loads(line) for line in f.read_text().splitlines()]
    f.write_text("".join(json.dumps(fn(o) or o) + "\n" for o in rows))


def _bare_tiny(tmp_path: Path) -> Path:
    """The tiny set made by hand: the same files, no model/benchmark fields in the lines."""
    d = tmp_path / "l05"
    shutil.copytree(TINY, d)
    (d / "README.md").unlink(missing_ok=True)
    for f in d.glob("*/*.jsonl"):
        _rewrite(f, lambda o: (o.pop("model", None), o.pop("benchmark", None)) and None)
    return d


def test_one_added_file_does_not_flip_the_layout_of_the_set(tmp_path):
    """B18: one file whose lines say ``"benchmark": "newbie"`` re-read the whole set as
    ``<model>/<benchmark>.jsonl`` (models ['tiny']); the set keeps its folder layout."""
    d = _bare_tiny(tmp_path)
    before = load_records(d)
    assert before.benchmarks == ("tiny",)
    added = d / "tiny" / "newbie.jsonl"
    shutil.copy(d / "tiny" / "beta.jsonl", added)
    _rewrite(added, lambda o: o.update(benchmark="newbie"))
    with pytest.raises(RecordsError, match=r"newbie.jsonl:1: benchmark 'newbie' does not match the directory 'tiny'"):
        load_records(d)


def _with_models(tmp_path: Path, names: dict[str, str]) -> Path:
    """The release fixture (flat layout: the lines' model field names the model) with models renamed."""
    d = tmp_path / "names"
    shutil.copytree(RELEASE, d)
    for f in d.glob("*.jsonl"):
        model = next((k for k in sorted(names, key=len, reverse=True) if f.name.endswith(f"_{k}.jsonl")), None)
        if model is not None:
            _rewrite(f, lambda o, new=names[model]: o.update(model=new))
    return d


def test_models_that_differ_only_in_normalisation_are_refused(tmp_path):
    """B19: NFC and NFD 'café' were audited as two models printed identically everywhere."""
    nfc, nfd = unicodedata.normalize("NFC", "caf\u00e9"), unicodedata.normalize("NFD", "caf\u00e9")
    d = _with_models(tmp_path, {"cirrus-3b": nfc, "dune-1b": nfd})
    with pytest.raises(RecordsError, match="differ only in Unicode normalisation"):
        load_records(d)


def test_a_name_longer_than_the_bound_is_refused(tmp_path):
    """B22: one 200,000-character model name made a 56 MB HTML report and 67 MB of JSON."""
    from leaderboard_audit.records.names import MAX_NAME_CHARS

    d = _with_models(tmp_path, {"atlas-70b-instruct": "a" * 200_000})
    with pytest.raises(RecordsError, match=f"model name of 200,000 characters .*at most {MAX_NAME_CHARS}"):
        load_records(d)
    ok = _with_models(tmp_path / "ok", {"atlas-70b-instruct": "a" * MAX_NAME_CHARS})
    assert "a" * MAX_NAME_CHARS in load_records(ok).models


def test_bidi_controls_do_not_reach_markdown_or_html(tmp_path):
    """B20: a model named U+202E evil U+202C reached the Markdown (55 raw RLO) and HTML (7)."""
    from leaderboard_audit.engine import audit
    from leaderboard_audit.reports.html import render_html
    from leaderboard_audit.reports.markdown import render_markdown

    d = _with_models(tmp_path, {"atlas-70b": "\u202eevil\u202c-bidi", "dune-1b": "zero\u200bwidth"})
    report = audit(load_records(d), n_boot=100)
    for text in (render_markdown(report), render_html(report)):
        assert not any(unicodedata.category(ch) == "Cf" for ch in text)
        assert "u202eevil" in text


@pytest.mark.parametrize("opt", ["--audit-report", "--audit-markdown", "--audit-html"])
def test_an_empty_report_path_is_a_usage_error(pytester, opt):
    """B23: ``--audit-report ""`` (an unset CI variable) wrote nothing and said nothing."""
    res = pytester.runpytest(f"--audit={TINY}", *Q, opt, "")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    assert f"{opt}: empty path" in res.stderr.str()


def test_several_records_problems_print_on_lines_of_their_own(pytester, tmp_path):
    """B38: the problems of one records error came out on one line, joined by literal '\\n'."""
    d = tmp_path / "r06"
    shutil.copytree(TINY, d)
    for f, n in (("beta", 3), ("gamma", 5)):
        p = next(d.glob(f"*/{f}.jsonl"))
        lines = p.read_text().splitlines()
        lines[n - 1] = "{not json"
        p.write_text("\n".join(lines) + "\n")
    res = pytester.runpytest(f"--audit={d}", *Q)
    err = res.stderr.str()
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    assert "\\n" not in err, err
    assert "invalid records (2 problems):\n" in err and "\n  fix: " in err, err
