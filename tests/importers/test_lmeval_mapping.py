"""A mapping proposed for metabench-style lm-eval runs (UX review 2026-12-04 #10: five tries
and a hand-written mapping; a printed `run:` line that still failed)."""

from __future__ import annotations

import json
import shlex
import shutil

from helpers.paths import DATA
from leaderboard_audit.importers.cli import main as import_main
from leaderboard_audit.importers.lmeval_mapping import propose_mapping
from leaderboard_audit.records import load_records

PYTHIA = DATA / "lm-eval-samples" / "synthetic__metabench-format"


def test_tasks_are_grouped_by_shared_documents():
    mapping, left = propose_mapping(PYTHIA)
    assert mapping == {
        "tasks": {
            "metabench_arc_secondary": {"benchmark": "arc", "config": "secondary"},
            "metabench_arc_secondary_permute": {"benchmark": "arc", "config": "secondary_permute"},
            "metabench_mmlu_secondary": {"benchmark": "mmlu", "config": "secondary"},
            "metabench_mmlu_secondary_permute": {"benchmark": "mmlu", "config": "secondary_permute"},
        }
    }
    # arc_permute holds other documents; mmlu_permute's config is not one arc has
    assert left == ["metabench_arc_permute", "metabench_mmlu_permute"]


def test_the_import_proposes_that_mapping_and_its_command_works(tmp_path, capsys, monkeypatch):
    src = tmp_path / "runs"
    shutil.copytree(PYTHIA, src)
    out = tmp_path / "records"
    assert import_main(["lm-eval", str(src), "-o", str(out)]) == 4
    err = capsys.readouterr().err
    assert "2. mapping: the tasks hold 2 benchmarks (arc, mmlu)" in err and "still stops" not in err
    text = err[err.index("save this as mapping.json") :]
    body = text[text.index("{") : text.index("\n  run: ")]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mapping.json").write_text(body)
    assert json.loads(body)["tasks"]["metabench_arc_secondary"] == {"benchmark": "arc", "config": "secondary"}
    (cmd,) = [line.split("run: ", 1)[1] for line in err.splitlines() if line.lstrip().startswith("run: ")]
    words = shlex.split(cmd)
    assert words[-2:] == ["--mapping", "mapping.json"] and "--intersect" not in words
    assert import_main(words[2:]) == 0
    rec = load_records(out)
    assert rec.benchmarks == ("arc", "mmlu") and rec.grid.keys == ("secondary", "secondary_permute")


def test_no_command_line_is_printed_that_is_known_to_fail(tmp_path, capsys):
    """Task names that do not split into benchmark and configuration: no proposal, and no
    `run:` line (it would still stop)."""
    src = tmp_path / "runs"
    shutil.copytree(PYTHIA, src)
    for f in src.rglob("samples_metabench_*.jsonl"):
        task = f.name.split("_2026")[0].removeprefix("samples_")
        f.rename(f.with_name(f.name.replace(task, task.replace("_", ""))))
    assert import_main(["lm-eval", str(src), "-o", str(tmp_path / "records")]) == 4
    err = capsys.readouterr().err
    assert "still stops on" in err and "run: " not in err
    assert "no command line makes this import work yet" in err
