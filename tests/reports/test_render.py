"""Markdown and HTML reports: content, the paper's four figures, evidence, legend, and
escaping of untrusted strings (model names, item text, legend values)."""

from __future__ import annotations

from leaderboard_audit.engine.gate import with_gate

import copy
import dataclasses
import re
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings, strategies as st

from helpers.builders import write
from leaderboard_audit.records import Items, Records
from leaderboard_audit.records.grid import Grid
from leaderboard_audit.engine import audit
from leaderboard_audit.engine.evidence import EVIDENCE_CAP, enrich_report
from leaderboard_audit.reports.html import render_html
from leaderboard_audit.reports.markdown import md, render_markdown
from leaderboard_audit.records.simulate import SimModel, SimSpec, demo_spec, simulate

ARGS = ("-p", "no:cacheprovider", "-q")
EVIL = "<script>alert(1)</script>"
PIPE = "pipe|model"
EVIL_Q = "Which <img src=x onerror=alert(2)> is | right? [link](http://evil.example)"
EVIL_TEMPLATE = "Question: {q}\n</td><script>alert(3)</script> | A) {a}"


def evil_records() -> Records:
    """Twins with hostile names (a manufactured pair), hostile item text and legend."""
    spec = SimSpec(
        (
            SimModel(EVIL, 0.8, template_shift={"letter_plain": 0.8}),
            SimModel(PIPE, 0.8, twin_of=EVIL, template_shift={"instruction": 0.6}),
            SimModel("plain-model", -1.0),
        ),
        {"bench": 80, "other|bench": 40},
        seed=3,
    )
    r = simulate(spec)
    it = r.items
    items = Items(it.benchmark, it.item_id, it.gold, [f"{EVIL_Q} #{i}" for i in range(len(it))], it.options)
    configs = tuple(
        dataclasses.replace(c, extra={"template_text": EVIL_TEMPLATE, "temperature": 0.0, "stop": ["</s>", "|"]})
        for c in r.grid.configs
    )
    grid = Grid(configs, r.grid.reference, extra={"harness": "lm-eval <b>x</b> | 0.4"})
    return dataclasses.replace(r, items=items, grid=grid)


@pytest.fixture(scope="module")
def evil_report() -> dict:
    r = evil_records()
    rep = audit(r, n_boot=500)
    return with_gate(rep, r, [PIPE], n_boot=500)


@pytest.fixture(scope="module")
def demo_report() -> dict:
    r = simulate(demo_spec(items_per_benchmark=60))
    return with_gate(audit(r, n_boot=500), r, ["borealis-8b"], n_boot=500)


def strip_script(text: str) -> str:
    """The HTML without its one inline script, which must be exactly the one the CSP allows by hash."""
    from leaderboard_audit.reports.html_script import SCRIPT, SCRIPT_HASH

    assert text.count("<script") == 1 and f"<script>{SCRIPT}</script>" in text
    assert f"script-src '{SCRIPT_HASH}'" in text and "unsafe-inline'; img" not in text.split("script-src", 1)[1][:80]
    return text.replace(f"<script>{SCRIPT}</script>", "")


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(tag, k, v) for k, v in attrs]


ALLOWED_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "header",
    "h1",
    "h2",
    "h3",
    "h4",
    "p",
    "span",
    "b",
    "section",
    "details",
    "summary",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "ul",
    "li",
    "figure",
    "figcaption",
    "svg",
    "g",
    "rect",
    "line",
    "circle",
    "text",
    "code",  # a next step's backticked command (UX review M12)
    "a",  # in-page links only: href="#model-..." to an id of the same page (fragment_links_only)
}

FRAGMENT = re.compile(r"#model-[a-z0-9-]+")


def fragment_links_only(text: str, parser: Tags) -> int:
    """The link policy: every href is an in-page ``#model-[a-z0-9-]+`` fragment whose target id is
    on the page; no other tag carries an href (SVG included), no link leaves the file. Returns the count."""
    hrefs = [(t, v) for t, k, v in parser.attrs if k in ("href", "xlink:href", "src", "action", "formaction")]
    ids = {v for _, k, v in parser.attrs if k == "id"}
    for tag, v in hrefs:
        assert tag == "a" and v is not None and FRAGMENT.fullmatch(v), (tag, v)
        assert v[1:] in ids, v
    assert len(re.findall(r"\bhref=", text)) == len(hrefs)
    return len(hrefs)


def test_html_escapes_untrusted_strings(evil_report):
    text = strip_script(render_html(evil_report))
    parser = Tags()
    parser.feed(text)
    assert set(parser.tags) <= ALLOWED_TAGS, set(parser.tags) - ALLOWED_TAGS
    assert not [a for a in parser.attrs if a[1].startswith("on") or a[1] in ("src", "xlink:href")]
    assert fragment_links_only(text, parser) > 0
    ids = [v for _, k, v in parser.attrs if k == "id" and v and v.startswith("model-")]
    assert ids and all(FRAGMENT.fullmatch("#" + v) for v in ids) and len(ids) == len(set(ids))
    assert "<script" not in text and "<img" not in text and "<b>x</b>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text  # the model name, shown as text
    assert "pipe|model" in text
    assert "&lt;img src=x onerror=alert(2)&gt;" in text  # item text in the evidence
    assert "&lt;/td&gt;&lt;script&gt;alert(3)&lt;/script&gt;" in text  # legend template text
    assert "lm-eval &lt;b&gt;x&lt;/b&gt; | 0.4" in text


def _cells(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_markdown_escapes_untrusted_strings(evil_report):
    text = render_markdown(evil_report)
    assert "<script" not in text and "<img" not in text and "<b>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text  # entities; '(' needs no escape (M11)
    assert "pipe\\|model" in text and "[link](" not in text
    # every table keeps its column count whatever the names contain
    lines = text.splitlines()
    for j, line in enumerate(lines):
        if line.startswith("|---"):
            n = _cells(lines[j - 1])
            k = j + 1
            while k < len(lines) and lines[k].startswith("| "):
                assert _cells(lines[k]) == n, lines[k]
                k += 1
    assert "alert(3)" in text and "template_text" in text  # legend rendered, escaped
    assert "\n" not in md("a\nb") and md("x|y") == "x\\|y"


def test_html_has_four_inline_figures_and_no_network(demo_report):
    text = strip_script(render_html(demo_report))
    for n in range(1, 5):
        m = re.search(
            rf'<figure id="fig-{n}" class="audit-figure"><svg [^>]*>.*?</svg><figcaption><b>Figure {n}\.', text, re.S
        )
        assert m, n
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    for bad in ("<script", "<link", "<img", "<iframe", "url(", "@import", "src="):
        assert bad not in text, bad
    parser = Tags()
    parser.feed(text)
    assert fragment_links_only(text, parser) > 0  # the only hrefs: in-page model links
    # only the SVG namespace mentions a URL; nothing is fetched
    assert set(re.findall(r"https?://[^\s\"'<]+", text)) == {"http://www.w3.org/2000/svg"}
    assert text.count("<figure") == 4


def test_every_verdict_with_its_margin(demo_report):
    from leaderboard_audit.reports.svg import esc
    from leaderboard_audit.reports.text import signed

    full = {k: v for k, v in demo_report.items() if k != "submission_audit"}  # a full audit: 1 MB budget
    html_text, md_text = render_html(full), render_markdown(full)
    n = 0
    for s in demo_report["scopes"].values():
        for v in s["verdicts"]:
            n += 1
            row = re.search(re.escape(f"<td>{esc(v['id'])}</td>") + r".*?</tr>", html_text, re.S)
            assert row and signed(v["margin"]) in row.group(0), v["id"]
            line = next(x for x in md_text.splitlines() if f"| {md(v['id'])} |" in x)
            assert signed(v["margin"]) in line
    assert n > 50


def test_figures_follow_the_report(demo_report):
    text = render_html(demo_report)
    s = demo_report["scopes"]["pooled"]
    fig1 = re.search(r'<figure id="fig-1".*?</figure>', text, re.S).group(0)
    names = [r["model"] for r in s["leaderboard"]]
    pos = [fig1.index(f"<title>{m}</title>") for m in names]
    assert pos == sorted(pos)  # reference order, best at the top
    fig2 = re.search(r'<figure id="fig-2".*?</figure>', text, re.S).group(0)
    assert fig2.count('class="pair-row"') == len(s["pairs"])
    for p in s["pairs"]:
        if p["fragile_share"] is not None:
            assert f"fragile {p['fragile_share']:.0%}" in fig2
    fig3 = re.search(r'<figure id="fig-3".*?</figure>', text, re.S).group(0)
    assert fig3.count('class="rank-row champion"') == len(s["champions"]["set"])
    assert "stroke-dasharray" in fig3
    fig4 = re.search(r'<figure id="fig-4".*?</figure>', text, re.S).group(0)
    assert fig4.count('class="axes-row"') == len(names) and fig4.count("<rect") >= 4 * len(names)


def test_evidence_for_manufactured_pairs(evil_report, demo_report):
    """Evidence for every printed gap the robust items do not order (a ``cause``; v5: only the
    ``harness`` cause is ``manufactured``)."""
    for rep in (evil_report, demo_report):
        man = [p for s in rep["scopes"].values() for p in s["pairs"] if p.get("cause")]
        assert man and all(p["manufactured"] == (p["cause"] == "harness") for p in man)
        for p in man:
            ev = p["fragile_evidence"]
            assert ev["net_items"] == p["gap_items"] - (p["higher_only"] - p["lower_only"])
            assert ev["shown"] == min(EVIDENCE_CAP, ev["higher_right"] + ev["lower_right"]) == len(ev["items"])
            sides = [i["favours"] for i in ev["items"]]
            assert sides == sorted(sides, key=lambda x: x != "higher")  # gap carriers first
        assert all(
            "fragile_evidence" not in p for s in rep["scopes"].values() for p in s["pairs"] if not p.get("cause")
        )
    ev = next(p for s in evil_report["scopes"].values() for p in s["pairs"] if p.get("cause"))["fragile_evidence"]
    assert all(i["question"].startswith(EVIL_Q) for i in ev["items"])
    md_text = render_markdown(evil_report)
    assert "Evidence: the items that carry the gaps the robust items do not order" in md_text
    assert md(ev["items"][0]["item_id"]) in md_text


def test_legend_lists_every_config_field(evil_report):
    leg = evil_report["legend"]
    assert len(leg["configs"]) == 26 and leg["reference"] == "gen|letter_plain|p0"
    assert all(c["template_text"] == EVIL_TEMPLATE and c["temperature"] == 0.0 for c in leg["configs"])
    text = render_html(evil_report)
    sec = re.search(r'<section id="legend">.*?</section>', text, re.S).group(0)
    for col in ("key", "scoring", "template", "ordering", "permutation", "stop", "temperature", "template_text"):
        assert f"<th>{col}</th>" in sec
    assert sec.count("<tr>") == 27


def test_submission_section(demo_report):
    h, m = render_html(demo_report), render_markdown(demo_report)
    assert '<section id="submission">' in h and "submission borealis-8b: FAIL" in h
    assert "## Submission gate" in m and "submission borealis-8b: FAIL" in m


def _without_optional_keys(report: dict) -> dict:
    """The report less every key the renderers treat as optional (read with .get or `in`)."""
    rep = copy.deepcopy(report)
    for k in ("legend", "submission_audit"):
        rep.pop(k, None)
    for k in ("path", "sha256", "notes"):
        rep["records"].pop(k, None)
    for s in rep["scopes"].values():
        s["brittleness"].pop("pi_benchmark", None)
        s.pop("champions_verdict_without", None)
        for p in s["pairs"]:
            p.pop("fragile_evidence", None)
        for row in s["leaderboard"]:
            row.pop("tie", None)
    return rep


@pytest.mark.slow
def test_reports_without_optional_keys_and_deterministic():
    r = simulate(demo_spec(items_per_benchmark=30))
    full = enrich_report(audit(r, n_boot=200), r)
    # the full report has what is stripped below, so the stripped one is missing something real
    assert "legend" in full and "pi_benchmark" in full["scopes"]["pooled"]["brittleness"]
    assert any(p.get("fragile_evidence") for s in full["scopes"].values() for p in s["pairs"])
    bare = _without_optional_keys(full)
    h, m = render_html(bare), render_markdown(bare)
    assert "<figure" in h and "# Leaderboard audit" in m
    assert '<section id="legend">' in render_html(full) and '<section id="legend">' not in h
    assert "## Legend" in render_markdown(full) and "## Legend" not in m
    heading = re.compile(r"\*\* \((manufactured|not decidable|too few robust items)")
    assert heading.search(render_markdown(full)) and not heading.search(m)
    assert "; per benchmark: " in render_markdown(full) and "; per benchmark: " not in m
    # deterministic: a second, independent audit renders byte for byte the same
    again = enrich_report(audit(r, n_boot=200), r)
    assert render_html(full) == render_html(again) and render_markdown(full) == render_markdown(again)
    assert h == render_html(_without_optional_keys(again)) and m == render_markdown(_without_optional_keys(again))


def test_known_pair_evidence_is_used_as_it_is():
    """Evidence an xdist worker sent (``scope_pair_evidence`` of the scopes it computed) is
    attached without reading the records again, and equals what the records give."""
    import numpy as np

    from leaderboard_audit.engine.evidence import scope_pair_evidence

    r = simulate(demo_spec(items_per_benchmark=30))
    rep = audit(r, n_boot=200)
    direct = enrich_report(copy.deepcopy(rep), r)
    known = {name: scope_pair_evidence(r, name, s["pairs"]) for name, s in rep["scopes"].items()}
    assert any(ev is not None for evs in known.values() for ev in evs)  # some pair has evidence
    # records whose tensor says nothing about these pairs: only the known evidence can be right
    blank = dataclasses.replace(r, correct=np.zeros_like(r.correct))
    assert enrich_report(copy.deepcopy(rep), blank, known_evidence=known) == direct
    assert enrich_report(copy.deepcopy(rep), blank) != direct  # (the blank records do differ)


def test_known_pair_evidence_goes_to_its_own_pair_whatever_the_model_names():
    """Known evidence is matched to pairs by position: two pairs whose "higher>lower" texts
    are the same (models "a>b", "c" and "a", "b>c") each get their own."""
    from leaderboard_audit.engine.evidence import add_pair_evidence

    pairs = [
        {"higher": "a>b", "lower": "c", "manufactured": True},
        {"higher": "a", "lower": "b>c", "manufactured": True},
        {"higher": "c", "lower": "d", "manufactured": False},
    ]
    report = {"scopes": {"pooled": {"pairs": pairs}}}
    add_pair_evidence(report, None, known={"pooled": [{"n": 1}, {"n": 2}, None]})
    assert [p.get("fragile_evidence") for p in pairs] == [{"n": 1}, {"n": 2}, None]


def test_plugin_writes_markdown_and_html(pytester, tmp_path):
    d = write(evil_records(), tmp_path / "evil")
    mdp, hp = tmp_path / "summary.md", tmp_path / "report.html"
    r = pytester.runpytest(
        "--audit", str(d), "--audit-markdown", str(mdp), "--audit-html", str(hp), "--audit-submission", EVIL, *ARGS
    )
    assert r.ret in (0, 1)
    h, m = strip_script(hp.read_text()), mdp.read_text()
    assert "<script" not in h and "<script" not in m
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in h and "pipe\\|model" in m
    assert h.count('class="audit-figure"') == 4
    assert "Submission gate" in h and "Submission gate" in m
    assert "template_text" in h


def test_markdown_fits_a_step_summary(demo_report):
    full = render_markdown(demo_report)
    small = render_markdown(demo_report, max_bytes=len(full.encode()) - 1)
    assert len(small) < len(full)
    assert "details left out to fit a step summary" in small
    assert "## Submission gate" in small and "## Legend" in small
    assert render_markdown(demo_report, max_bytes=None) == full


def test_newcomer_marked_in_the_figures(demo_report):
    text = render_html(demo_report)
    for n in (1, 2, 3, 4):
        fig = re.search(rf'<figure id="fig-{n}".*?</figure>', text, re.S).group(0)
        assert 'class="newcomer"' in fig and "borealis-8b" in fig, n
    assert 'class="newcomer"' not in render_html({k: v for k, v in demo_report.items() if k != "submission_audit"})


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FFF), max_size=14), st.text(max_size=40)
        ),
        min_size=1,
        max_size=6,
    )
)
def test_plain_pairs_equals_tabulate(rows):
    """Failure blocks' evidence table (reports.terminal.plain_pairs) is tabulate's plain format."""
    from leaderboard_audit.reports.terminal import plain_pairs, tabulate

    assert plain_pairs(rows) == tabulate(rows, tablefmt="plain", disable_numparse=True)
    assert plain_pairs([("", "x"), ("", "yy")]) == tabulate(
        [("", "x"), ("", "yy")], tablefmt="plain", disable_numparse=True
    )


def test_model_rows_link_to_what_is_known(demo_report):
    """Issue 22: a model's row links to what is known about it: its row in "What is known per model"
    (band, robust, tier, models below, configs won, both adjacent pairs), by an in-page id."""
    from leaderboard_audit.reports.html import model_id
    from leaderboard_audit.reports.leaderboard import rows_of

    text = render_html(demo_report)
    s = demo_report["scopes"]["pooled"]
    facts = {r["model"]: r for r in rows_of(s)[0]}
    section = text.split('<section id="models">', 1)[1].split("</section>", 1)[0]
    board = text.split('<section class="scope" id="scope-0">', 1)[1].split("</table>", 1)[0]
    for r in s["leaderboard"]:
        m, mid = r["model"], model_id(r["model"])
        row = re.search(rf'<tr id="{mid}">(.*?)</tr>', section, re.S)
        assert row, m
        f = facts[m]
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
        assert cells[2:8] == [
            f[k] for k in ("score", "band (min-max)", "robust", "rank", "models below", "configs won")
        ]
        assert f'href="#{mid}"' in board, m  # Table 1's model cell links to it
    first, second = s["pairs"][0]["higher"], s["pairs"][0]["lower"]
    row = re.search(rf'<tr id="{model_id(second)}">(.*?)</tr>', section, re.S).group(1)
    assert f'<a class="m" href="#{model_id(first)}">{first}</a>: ' in row  # its pair above, linked


def test_model_ids_are_safe_and_distinct():
    from leaderboard_audit.reports.html import model_id

    names = ["a/b", "a-b", "A B", "<script>alert(1)</script>", '"><img src=x>', "", "模型", "x" * 300]
    ids = [model_id(n) for n in names]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"model-[a-z0-9-]+", i) and len(i) <= 6 + 41 + 8 for i in ids), ids


# ---- Figure 5's colours: distinct for everyone (issue 22: "Figure 5 draws 8 similar hues")

_DEUTAN = ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881))
_PROTAN = ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998))


def _lab(hex_colour: str, cvd=None) -> tuple[float, float, float]:
    """CIELAB (D65) of an sRGB colour, as seen with full deuteranopia/protanopia (Machado 2009) if asked."""
    h = hex_colour.lstrip("#")
    lin = [
        (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
        for c in (int(h[i : i + 2], 16) / 255 for i in (0, 2, 4))
    ]
    if cvd:
        lin = [min(1.0, max(0.0, sum(m * x for m, x in zip(row, lin)))) for row in cvd]
    r, g, b = lin
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in (x, y, z)]
    return (116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2]))


def min_delta_e(colours: list[str], cvd=None) -> float:
    import itertools
    import math

    labs = [_lab(c, cvd) for c in colours]
    return min(math.dist(a, b) for a, b in itertools.combinations(labs, 2))


def test_figure5_curves_are_distinct_for_colour_blind_readers():
    """Every curve of Figure 5 differs in colour or dash; the solid ones (the first 7 models and the
    pooled curve) are at least 15 ΔE (CIE76) apart for normal vision, deuteranopia and protanopia.
    The previous palette's first 8 colours were 1.7 ΔE apart under deuteranopia (green v red)."""
    from leaderboard_audit.reports.svg import figure_roc

    curve = {"auc": 0.7, "roc": {"fpr": [0.0, 0.5, 1.0], "tpr": [0.0, 0.7, 1.0]}}
    s = {"flip": {"config": "ll|cloze_plain", "per_model": {f"m{j:02d}": curve for j in range(20)}, "pooled": curve}}
    svg = figure_roc(s)
    styles = re.findall(
        r'<polyline class="roc" points="[^"]*" fill="none" stroke="([^"]+)"(?: stroke-dasharray="([^"]+)")?', svg
    )
    assert len(styles) == 21 and len(set(styles)) == 21
    solid = [c for c, d in styles if not d]
    assert len(solid) == 8
    for cvd in (None, _DEUTAN, _PROTAN):
        assert min_delta_e(solid, cvd) >= 15, cvd
    old = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#9d755d", "#bab0ac"]
    assert min_delta_e(old, _DEUTAN) < 5  # what the test guards against


def test_legend_values_keep_their_line_breaks():
    """A structured legend value is one "key: value" a line: real line breaks in the pre-wrap cell,
    not U+FFFD marks (the screenshot of fixtures/real showed them); other control characters still go."""
    from leaderboard_audit.reports.html import legend_value

    cell = legend_value({"labels": ["A", "B"], "line_format": "{label}) {text}", "evil": "a\x1bb<i>"})
    assert "\ufffd" in cell.split("evil: ", 1)[1][:3]  # the ESC, marked
    assert cell.count("\n") == 2 and "\ufffd" not in cell.replace("a\ufffdb", "")
    assert "&lt;i&gt;" in cell and "<i>" not in cell


def test_figure2_pair_labels_keep_the_ends_of_long_names():
    """At 4,278 models both names of a pair were cut to their common start ("org0/model-04... >
    org32/model-..."): the end, where generated names differ, is kept."""
    from leaderboard_audit.reports.svg import _cut_mid

    assert _cut_mid("org0/model-04268", 14) == "org0/mo…-04268"
    assert _cut_mid("short", 14) == "short" and len(_cut_mid("x" * 50, 14)) == 14
