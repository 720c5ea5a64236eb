"""Report outputs are declared at their render functions (``reports.outputs.output``)."""

from __future__ import annotations

import dataclasses

import pytest

from leaderboard_audit.reports import outputs
from leaderboard_audit.settings import Settings


def test_outputs_in_declaration_order_each_a_setting():
    assert [o.key for o in outputs.OUTPUTS] == ["report", "markdown", "html", "leaderboard"]
    assert [o.render for o in outputs.OUTPUTS] == [
        outputs.render_json,
        outputs.render_md,
        outputs.render_page,
        outputs.render_board,
    ]
    fields = {f.name for f in dataclasses.fields(Settings)}
    assert all(o.key in fields for o in outputs.OUTPUTS)  # the path each asks for is a setting


def test_declaring_an_output_keeps_the_function_and_refuses_a_second_name(monkeypatch):
    monkeypatch.setattr(outputs, "_DECLARED", list(outputs.OUTPUTS))

    @outputs.output("verdicts", "--audit-verdicts", "--verdicts", "PATH.csv", "every verdict as a CSV row", (".csv",))
    def render_verdicts(report, path):
        return "id,status\n"

    assert render_verdicts({}, "v.csv") == "id,status\n"
    assert outputs._DECLARED[-1].render is render_verdicts and outputs._DECLARED[-1].suffixes == (".csv",)
    with pytest.raises(ValueError, match="'html' .* is declared twice"):
        outputs.output("html", "--audit-page", "--page", "PATH", "again")(render_verdicts)
