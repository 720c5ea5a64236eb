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


def test_pytest_names_every_decision_as_one_mapping_file(tmp_path, pytester):
    """pytest --audit SRC --audit-format lm-eval named only the model problem, with a --model
    pytest does not have (UX review 2026-12-04 #11): now every decision, settled in one
    mapping to save as SRC/audit_mapping.json, and the audit then runs."""
    from helpers.lmeval import SMOL

    src = tmp_path / "runs"
    shutil.copytree(SMOL, src)
    res = pytester.runpytest("--audit", str(src), "--audit-format", "lm-eval", "-p", "no:cacheprovider")
    err = res.stderr.str()
    assert res.ret == 4 and "this import needs 3 decisions" in err, err
    assert "--model" not in err and "1. model:" in err and "3. documents:" in err
    body = err[err.index("{") : err.index("}") + 1]
    (src / "audit_mapping.json").write_text(body)
    assert "--audit-intersect (pytest)" in err
    ok = pytester.runpytest(
        "--audit", str(src), "--audit-format", "lm-eval", "--audit-intersect", "-p", "no:cacheprovider", "--tb=no"
    )
    assert ok.ret in (0, 1), ok.stderr.str()


def test_the_cli_audit_proposes_the_metabench_mapping(tmp_path, capsys):
    from leaderboard_audit.cli import main

    src = tmp_path / "runs"
    shutil.copytree(PYTHIA, src)
    assert main(["audit", str(src), "--format", "lm-eval"]) == 4
    err = capsys.readouterr().err
    assert "2. mapping: the tasks hold 2 benchmarks (arc, mmlu)" in err and "intersect" not in err
    body = err[err.index("{") : err.rindex("}") + 1]
    (src / "audit_mapping.json").write_text(body)
    assert main(["audit", str(src), "--format", "lm-eval", "--boot", "200"]) in (0, 1)
    assert "2 configs" in " ".join(capsys.readouterr().out.split())
