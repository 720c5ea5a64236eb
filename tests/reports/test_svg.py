"""Figure 2's pair labels (UX review 2026-12-04 #24): cut only when the pair does not fit, the
shorter name whole where it can be, each name cut in its middle (ends kept), the full pair in
the tooltip, and a label column wide enough for 12 px capitals."""

from __future__ import annotations

from leaderboard_audit.reports.svg import LABEL_CHARS, LEFT, _label, pair_label


def test_a_pair_that_fits_is_whole():
    assert pair_label("llama-13b", "falcon-40b-instruct") == "llama-13b > falcon-40b-instruct"


def test_the_shorter_name_stays_whole_and_the_longer_keeps_its_end():
    label = pair_label("AA051611/V0201", "AA051611/O0204-merged-slerp-v2")
    assert len(label) == LABEL_CHARS and label.startswith("AA051611/V0201 > ") and label.endswith("slerp-v2")


def test_two_long_names_share_the_room():
    label = pair_label("org0/model-04268-instruct", "org32/model-00001-instruct")
    assert len(label) == LABEL_CHARS
    left, right = label.split(" > ")
    assert left.startswith("org0/") and right.startswith("org32/") and "…" in left and "…" in right


def test_the_label_column_holds_the_widest_label():
    """~8.5 px per character at 12 px for capitals and digits (the clipped 'AA051611/...')."""
    assert LABEL_CHARS * 8.5 <= LEFT - 8
    text = "AA051611/V0201 > AA051611/O0204-merged-slerp-v2"
    svg = _label(10, text, shown=pair_label(*text.split(" > ")))
    assert f"<title>{text.replace('>', '&gt;')}</title>" in svg  # the whole pair in the tooltip
