"""An lm-eval samples file linked out of the imported folder is refused (issue 25: B15)."""

from __future__ import annotations

import json
import shutil

import pytest

from leaderboard_audit.importers import load
from leaderboard_audit.records import RecordsError
from helpers.paths import DATA

S = DATA / "lm-eval-samples" / "SmolLM2-135M-Instruct"


def test_a_samples_file_linked_outside_is_refused(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for d in ("arc_challenge_local", "arc_challenge_local_bare"):
        shutil.copytree(S / d, runs / d)
    mapping = {
        "runs": {
            "arc_challenge_local": {"config": {"scoring": "ll", "template": "cloze_question"}},
            "arc_challenge_local_bare": {"config": {"scoring": "ll", "template": "cloze_plain"}},
        },
        "benchmark": "arc",
        "model": "smol",
        "reference": "ll|cloze_question",
    }
    (runs / "audit_mapping.json").write_text(json.dumps(mapping))
    load(runs, "lm-eval")  # the honest folder imports
    (f,) = (runs / "arc_challenge_local_bare").glob("samples_*.jsonl")
    (tmp_path / "outside").mkdir()
    moved = shutil.move(f, tmp_path / "outside" / "other.jsonl")
    f.symlink_to(moved)
    with pytest.raises(RecordsError, match="outside the folder being imported"):
        load(runs, "lm-eval")
