"""``leaderboard_audit.audit`` from Python: a path works as ``pytest --audit`` takes it
(UX review 2026-12-04 #18: ``audit("arc")`` raised AttributeError)."""

from __future__ import annotations

import pandas as pd

import leaderboard_audit
from helpers.paths import TINY
from leaderboard_audit.engine import dumps_report


def test_audit_takes_a_path_and_gives_the_loaded_records_report():
    by_path = leaderboard_audit.audit(TINY, n_boot=200)
    loaded = leaderboard_audit.audit(leaderboard_audit.load_records(TINY), n_boot=200, path=str(TINY))
    assert dumps_report(by_path) == dumps_report(loaded)
    assert by_path["records"]["path"] == str(TINY) and by_path["records"]["sha256"]
    pairs = pd.DataFrame(by_path["scopes"]["pooled"]["pairs"])  # the documented table view
    assert len(pairs) == len(by_path["records"]["models"]) - 1


def test_audit_of_a_missing_path_is_a_records_error(tmp_path):
    import pytest

    with pytest.raises(leaderboard_audit.RecordsError, match="no such file or directory"):
        leaderboard_audit.audit(str(tmp_path / "nope"))
