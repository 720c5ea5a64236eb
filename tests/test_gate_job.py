"""The documented CI job (.github/workflows/audit-gate.yml), run by .ci/emulate_gate_job.py
against four pull requests: an honest one reaches the audit; a ``pytest.ini`` with
``--help``, a plugin and a ``$(...)`` model name run nothing (markers never appear) and
the job fails at the guard step. The same emulation runs a job written the insecure way,
where the hostile PRs do run their code: the emulation is faithful enough to catch it."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from helpers.builders import write
from helpers.gate_boards import done_when_board
from helpers.paths import REPO
from helpers.wheel import sha256

ROOT = REPO
WORKFLOW = ROOT / ".github" / "workflows" / "audit-gate.yml"
INI = ROOT / ".github" / "leaderboard-gate.ini"
NEW = "org/newbie"  # its file: records/bench/org__newbie.jsonl
pytestmark = pytest.mark.skipif(
    not (shutil.which("git") and shutil.which("bash") and shutil.which("tar")), reason="the job needs git, bash, tar"
)


def _emulator():
    spec = importlib.util.spec_from_file_location("emulate_gate_job", ROOT / ".ci" / "emulate_gate_job.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("emulate_gate_job", mod)
    spec.loader.exec_module(mod)
    return mod


emu = _emulator()


@pytest.fixture(scope="module")
def boards(tmp_path_factory, built_wheel):
    """The base tree (the trusted workflow and ini, the board without the newcomer) and
    the newcomer's files, for a clean newcomer and one that manufactures a pair."""
    root = tmp_path_factory.mktemp("boards")
    out = {}
    for kind in ("clean", "twin"):
        r = done_when_board(kind, items=120)
        r = dataclasses.replace(r, models=tuple(NEW if m == "newbie" else m for m in r.models))
        out[kind] = write(r, root / kind)
    base = root / "base"
    (base / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(WORKFLOW, base / ".github" / "workflows" / WORKFLOW.name)
    shutil.copy(INI, base / ".github" / INI.name)
    pin_wheel(base, built_wheel)
    shutil.copytree(out["clean"], base / "records", ignore=shutil.ignore_patterns("org__newbie.jsonl"))
    return base, out


PIN = ".github/leaderboard-audit.sha256"


def pin_wheel(base: Path, wheel: Path) -> None:
    """The tool pinned on the base branch as docs/ci-gate.md says: the wheel under
    .github/leaderboard-audit/ and its `sha256sum` line in .github/leaderboard-audit.sha256."""
    (base / ".github" / "leaderboard-audit").mkdir(parents=True, exist_ok=True)
    rel = f".github/leaderboard-audit/{wheel.name}"
    shutil.copy(wheel, base / rel)
    (base / PIN).write_text(f"{sha256(wheel)}  {rel}\n")


def pr_tree(tmp_path: Path, base: Path, name: str = "pr") -> Path:
    pr = tmp_path / name
    shutil.copytree(base, pr)
    return pr


def add_newcomer(pr: Path, board: Path, *, drop_model_field: bool = True) -> None:
    """The newcomer's file as a submitter writes it; records-v1 lines need no ``model``."""
    lines = (board / "bench" / "org__newbie.jsonl").read_text().splitlines()
    if drop_model_field:
        rows = [json.loads(x) for x in lines]
        for row in rows:
            row.pop("model", None)
        lines = [json.dumps(row) for row in rows]
    (pr / "records" / "bench" / "org__newbie.jsonl").write_text("\n".join(lines) + "\n")


def unescape(md: str) -> str:
    return md.replace("\\", "").replace("&gt;", ">")


def steps(result: dict) -> dict[str, dict]:
    return {s["name"]: s for s in result["steps"]}


AUDIT = "audit what the newcomers change"
INSTALL = "install leaderboard-audit, pinned (a wheel on the base branch, its SHA-256 checked)"
GUARD = "refuse anything but data in records/"
COMMENT = "sticky PR comment"


def gh_calls(state: Path) -> list[dict]:
    f = state / "gh_calls.jsonl"
    return [json.loads(x) for x in f.read_text().splitlines()] if f.exists() else []


def comments(state: Path) -> list[dict]:
    f = state / "comments.json"
    return json.loads(f.read_text()) if f.exists() else []


# -- the docs carry the workflow verbatim ------------------------------------------------


def test_docs_include_the_workflow_verbatim():
    doc = (ROOT / "docs" / "ci-gate.md").read_text()
    m = re.search(r"<!-- verbatim: \.github/workflows/audit-gate\.yml -->\n```yaml\n(.*?)```\n", doc, re.S)
    assert m, "docs/ci-gate.md must carry the workflow in a ```yaml block after its marker"
    assert m[1] == WORKFLOW.read_text()
    assert ".github/workflows/audit-gate.yml" in (ROOT / "README.md").read_text()
    wf = emu.load_workflow(WORKFLOW.read_text())
    assert list(wf["on"]) == ["pull_request_target"]
    for step in wf["jobs"]["gate"]["steps"]:  # no PR-controlled value is pasted into a script
        for expr in emu.EXPR.findall(step.get("run", "")):
            pytest.fail(f"${{{{{expr}}}}} inside run: of {step.get('name')!r}")


def test_expressions_are_substituted_as_text_before_the_shell():
    ctx = {"github": {"event": {"pull_request": {"title": "x$(id)", "number": 7}}}, "steps": {}}
    status = {"failed": False}
    assert emu.substitute('echo "${{ github.event.pull_request.title }}"', ctx, status) == 'echo "x$(id)"'
    assert emu.substitute("${{github.event.pull_request.number}}", ctx, status) == "7"
    assert emu.condition("always()", ctx, {"failed": True})
    assert not emu.condition(None, ctx, {"failed": True})
    assert emu.condition("${{ failure() }}", ctx, {"failed": True})
    with pytest.raises(emu.EmulationError):
        emu.substitute("${{ fromJSON(github.event) }}", ctx, status)


# -- (a) the honest pull request ---------------------------------------------------------


@pytest.mark.slow
def test_honest_pr_reaches_the_audit_and_the_comment_is_sticky(boards, tmp_path):
    base, board = boards
    state = tmp_path / "state"
    pr = pr_tree(tmp_path, base)
    add_newcomer(pr, board["clean"])
    r = emu.run_job(base, pr, tmp_path / "run1", state=state)
    s = steps(r)
    assert r["conclusion"] == "success", s[AUDIT].get("output")
    assert s[GUARD]["outcome"] == "success"
    out = s[AUDIT]["output"]
    assert "gating checks: manufactured, ranking, champions" in out
    assert re.search(rf"^submission {NEW}: \w+ - .*; exit 0$", out, re.M)
    ws = Path(r["workspace"])
    assert '"model"' not in (ws / "records" / "bench" / "org__newbie.jsonl").read_text()  # found by its name
    assert (ws / "gate.md").stat().st_size <= 65_536 and (ws / "gate.json").is_file()
    assert json.loads((ws / "gate.json").read_text())["submission"] == [NEW]  # `__` = `/`
    posted = comments(state)
    assert len(posted) == 1 and posted[0]["issue"] == 7
    assert posted[0]["body"].startswith("<!-- leaderboard-gate -->\n## Submission gate")
    assert [c["method"] for c in gh_calls(state)] == ["GET", "POST"]
    assert all(c["token"] for c in gh_calls(state))  # GH_TOKEN reached gh through env:

    # a second push: the newcomer now manufactures a pair with mid; the gate fails (exit 1),
    # and the same comment is edited in place
    pr2 = pr_tree(tmp_path, base, "pr2")
    add_newcomer(pr2, board["twin"])
    r2 = emu.run_job(base, pr2, tmp_path / "run2", state=state)
    s2 = steps(r2)
    assert r2["conclusion"] == "failure"
    assert s2[GUARD]["outcome"] == "success"
    assert s2[AUDIT]["exit_code"] == 1
    assert f"fails the gate: manufactured[pooled-{NEW}>mid]" in s2[AUDIT]["output"]
    assert s2[COMMENT]["outcome"] == "success"  # if: always()
    posted = comments(state)
    assert len(posted) == 1 and f"manufactured[pooled-{NEW}>mid]" in unescape(posted[0]["body"])
    calls = gh_calls(state)
    assert [c["method"] for c in calls] == ["GET", "POST", "GET", "PATCH"]
    assert calls[-1]["endpoint"] == f"repos/board/leaderboard/issues/comments/{posted[0]['id']}"


@pytest.mark.slow
def test_a_pr_without_a_model_file_passes_without_an_audit(boards, tmp_path):
    base, _ = boards
    pr = pr_tree(tmp_path, base)
    (pr / "records" / "bench" / "NOTES.md").write_text("a note\n")
    r = emu.run_job(base, pr, tmp_path / "run")
    s = steps(r)
    assert r["conclusion"] == "success"
    assert "no new or changed model file" in s[AUDIT]["output"]
    assert comments(Path(r["state"])) == []


# -- the install step: the pinned wheel, installed for real ---------------------------------


@pytest.mark.slow
def test_the_job_installs_the_pinned_wheel_into_a_fresh_python(boards, tmp_path):
    base, board = boards
    pr = pr_tree(tmp_path, base)
    add_newcomer(pr, board["clean"])
    work = tmp_path / "run"
    r = emu.run_job(base, pr, work)
    s = steps(r)
    assert r["conclusion"] == "success", s[INSTALL].get("output")
    out = s[INSTALL]["output"]
    assert ": OK" in out and "Successfully installed leaderboard-audit-" in out  # sha256sum, then pip
    installed = list((work / "python").rglob("site-packages/leaderboard_audit/plugin/guard.py"))
    assert len(installed) == 1  # the wheel's, in the job's own python
    assert not list((work / "runner_cache").glob("leaderboard_audit*"))  # the cache never had it


@pytest.mark.slow
def test_a_wheel_that_does_not_match_its_pin_is_not_installed(boards, tmp_path):
    base0, board = boards
    base = pr_tree(tmp_path, base0, "base")
    (wheel,) = (base / ".github" / "leaderboard-audit").glob("*.whl")
    wheel.write_bytes(wheel.read_bytes() + b"\0")  # one byte appended: another artefact
    pr = pr_tree(tmp_path, base)
    add_newcomer(pr, board["clean"])
    r = emu.run_job(base, pr, tmp_path / "run")
    s = steps(r)
    assert r["conclusion"] == "failure"
    assert s[INSTALL]["outcome"] == "failure" and "FAILED" in s[INSTALL]["output"]
    assert "Successfully installed" not in s[INSTALL]["output"]
    assert s[GUARD]["outcome"] == "skipped" and s[AUDIT]["outcome"] == "skipped"


@pytest.mark.slow
def test_without_the_install_step_nothing_provides_the_tool(boards, tmp_path):
    """The emulation does not hand the job the package: its python is a fresh venv."""
    base0, board = boards
    base = pr_tree(tmp_path, base0, "base")
    wf = WORKFLOW.read_text()
    start = wf.index("      - name: install leaderboard-audit")
    end = wf.index("      - name: fetch the PR's records as data")
    (base / ".github" / "workflows" / "audit-gate.yml").write_text(wf[:start] + wf[end:])
    pr = pr_tree(tmp_path, base)
    add_newcomer(pr, board["clean"])
    r = emu.run_job(base, pr, tmp_path / "run")
    s = steps(r)
    assert INSTALL not in s
    # the guard is the installed tool's command: without the install step there is none
    assert s[GUARD]["outcome"] == "failure" and "leaderboard-audit: command not found" in s[GUARD]["output"]


# -- (b)-(d) hostile pull requests -------------------------------------------------------


def hostile(kind: str, pr: Path, board: Path, marker: Path) -> None:
    rec = pr / "records"
    if kind == "help":
        add_newcomer(pr, board)
        (rec / "pytest.ini").write_text("[pytest]\naddopts = -p no:leaderboard_audit --help\n")
    elif kind == "plugin":
        add_newcomer(pr, board)
        (rec / "pytest.ini").write_text("[pytest]\npythonpath = .\naddopts = -p evil\n")
        code = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('pwned')\n"
        (rec / "evil.py").write_text(code)
        (pr / "conftest.py").write_text(code)  # outside records/: never even fetched
        (pr / ".github" / "leaderboard-gate.ini").write_text("[pytest]\npythonpath = records\naddopts = -p evil\n")
    elif kind == "shell-name":
        # a file name cannot hold '/': `cd` with no argument goes to $HOME (the runner's,
        # an absolute temp folder); the lines' `model` can name the absolute marker
        name = "newbie$(cd;touch PWNED).jsonl"
        lines = (board / "bench" / "org__newbie.jsonl").read_text().splitlines()
        model = f"newbie$(touch {marker})"
        rows = [{**json.loads(x), "model": model} for x in lines]
        (rec / "bench" / name).write_text("".join(json.dumps(row) + "\n" for row in rows))
    else:
        raise AssertionError(kind)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["help", "plugin", "shell-name"])
def test_hostile_pr_runs_nothing_and_is_refused_at_the_guard(boards, tmp_path, kind):
    base, board = boards
    marker = tmp_path / "MARKER"
    pr = pr_tree(tmp_path, base)
    hostile(kind, pr, board["clean"], marker)
    work = tmp_path / "run"
    r = emu.run_job(base, pr, work)
    s = steps(r)
    assert r["conclusion"] == "failure"
    assert s["fetch the PR's records as data"]["outcome"] == "success"
    assert s[GUARD]["outcome"] == "failure" and s[GUARD]["exit_code"] == 4
    assert "refusing records" in s[GUARD]["output"]
    assert s[AUDIT]["outcome"] == "skipped"  # never reaches the audit
    assert s[COMMENT]["outcome"] == "success"  # if: always(), but there is no gate.md
    assert comments(Path(r["state"])) == [] and gh_calls(Path(r["state"])) == []
    assert not marker.exists()
    assert not (work / "home" / "PWNED").exists()
    assert not list(tmp_path.rglob("PWNED")) and not list(tmp_path.rglob("MARKER"))
    assert not (Path(r["workspace"]) / "gate.md").exists()


@pytest.mark.slow
def test_a_records_link_is_refused(boards, tmp_path):
    base, board = boards
    pr = pr_tree(tmp_path, base)
    shutil.rmtree(pr / "records")
    (pr / "data").mkdir()
    shutil.copytree(board["clean"], pr / "data" / "r")
    (pr / "records").symlink_to("data/r")
    r = emu.run_job(base, pr, tmp_path / "run")
    s = steps(r)
    assert s[GUARD]["outcome"] == "failure" and "records: a link" in s[GUARD]["output"]
    assert s[AUDIT]["outcome"] == "skipped"


# -- the emulation catches the insecure job ----------------------------------------------

INSECURE = """\
name: leaderboard gate, written the insecure way
on: pull_request_target
jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          ref: ${{ github.event.pull_request.base.sha }}
      - uses: actions/setup-python@v5
      - id: new
        env:
          PR_REPO: ${{ github.event.pull_request.head.repo.clone_url }}
          PR_SHA: ${{ github.event.pull_request.head.sha }}
        run: |
          git fetch --no-tags --depth=1 "$PR_REPO" "$PR_SHA"
          f=$(git diff --name-only --diff-filter=A HEAD "$PR_SHA" -- records | head -n 1)
          rm -rf records
          git archive "$PR_SHA" records | tar -x
          echo "model=$(basename "$f" .jsonl)" >> "$GITHUB_OUTPUT"
      - run: |
          echo "auditing ${{ steps.new.outputs.model }}"
          python -m pip install "$(awk '{ print $2 }' .github/leaderboard-audit.sha256)"
          python -m pytest --audit records/ --audit-submission=org/newbie -p no:cacheprovider
"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["help", "plugin", "shell-name"])
def test_the_emulation_catches_the_insecure_job(boards, tmp_path, kind):
    """Without the guard, -c and env:, the same PRs get through: the help exits 0 with no
    audit, the plugin and the shell name write their marker."""
    base0, board = boards
    base = pr_tree(tmp_path, base0, "base")
    (base / ".github" / "workflows" / "audit-gate.yml").write_text(INSECURE)
    marker = tmp_path / "MARKER"
    pr = pr_tree(tmp_path, base)
    hostile(kind, pr, board["clean"], marker)
    work = tmp_path / "run"
    r = emu.run_job(base, pr, work)
    last = r["steps"][-1]
    if kind == "help":
        assert r["conclusion"] == "success" and "usage:" in last["output"] and "submission" not in last["output"]
    elif kind == "plugin":
        assert marker.read_text() == "pwned"
    else:
        assert "auditing newbie" in last["script"] and (work / "home" / "PWNED").exists()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["help", "plugin", "shell-name"])
def test_without_the_guard_step_the_audit_step_alone_runs_nothing(boards, tmp_path, kind):
    """Defence in depth: with the guard step removed, ``-c`` of the trusted ini,
    ``--audit=records`` and the names kept as data still run nothing of the PR."""
    base0, board = boards
    base = pr_tree(tmp_path, base0, "base")
    wf = WORKFLOW.read_text()
    guard_step = "      - name: refuse anything but data in records/\n        run: leaderboard-audit guard records\n"
    assert guard_step in wf
    (base / ".github" / "workflows" / "audit-gate.yml").write_text(wf.replace(guard_step, ""))
    marker = tmp_path / "MARKER"
    pr = pr_tree(tmp_path, base)
    hostile(kind, pr, board["clean"], marker)
    work = tmp_path / "run"
    r = emu.run_job(base, pr, work)
    s = steps(r)
    assert GUARD not in s and s[AUDIT]["outcome"] == "failure", s[AUDIT].get("output")
    assert "usage:" not in s[AUDIT]["output"]  # no --help from the PR's ini
    assert not marker.exists() and not (work / "home" / "PWNED").exists()
    assert not list(tmp_path.rglob("PWNED")) and not list(tmp_path.rglob("MARKER"))


@pytest.mark.slow
def test_a_changed_model_file_is_audited_as_a_submission(boards, tmp_path):
    base, _ = boards
    pr = pr_tree(tmp_path, base)
    f = pr / "records" / "bench" / "mid.jsonl"
    rows = [json.loads(x) for x in f.read_text().splitlines()]
    for row in rows[::4]:
        row["correct"] = {k: 1 for k in row["correct"]}
    f.write_text("".join(json.dumps(row) + "\n" for row in rows))
    r = emu.run_job(base, pr, tmp_path / "run")
    out = steps(r)[AUDIT]["output"]
    assert re.search(r"^submission mid: \w+ - ", out, re.M), out[-3000:]


# -- the gate fails closed (issue 46, C08) -------------------------------------------------


def _flat_newcomer(pr: Path, board: Path) -> None:
    rows = [json.loads(x) for x in (board / "bench" / "org__newbie.jsonl").read_text().splitlines()]
    with open(pr / "records" / "bench_newbie.jsonl", "w") as f:
        for row in rows:
            f.write(json.dumps({**row, "model": "newbie", "benchmark": "bench"}) + "\n")


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind, named",
    [
        ("grid.json broken", "records/grid.json"),
        ("newcomer as flat files", "records/bench_newbie.jsonl"),
        ("a competitor deleted", "records/bench/mid.jsonl (deleted or no longer a file)"),
    ],
)
def test_a_pr_that_changes_what_the_gate_does_not_audit_fails_it_with_the_reason(boards, tmp_path, kind, named):
    """C08: each of these PRs left the board unreadable (or its newcomer unaudited) and passed
    green with 'no new or changed model file' on d0b4150."""
    base, out = boards
    pr = pr_tree(tmp_path, base)
    if kind == "grid.json broken":
        (pr / "records" / "grid.json").write_text('{"configs": [}')
    elif kind == "newcomer as flat files":
        _flat_newcomer(pr, out["clean"])
    else:
        (pr / "records" / "bench" / "mid.jsonl").unlink()
    r = emu.run_job(base, pr, tmp_path / "run")
    s = steps(r)
    assert r["conclusion"] == "failure"
    assert s[AUDIT]["exit_code"] == 4
    assert "fails the gate: the PR changes records/ files that are not a model's records file" in s[AUDIT]["output"]
    assert f"  {named}\n" in s[AUDIT]["output"]


@pytest.mark.slow
def test_a_board_that_cannot_be_audited_fails_the_gate_even_when_the_pr_adds_no_model(boards, tmp_path):
    """Fail closed: with no model file to audit, the job still loads the PR's records."""
    base, _ = boards
    broken = tmp_path / "base"
    shutil.copytree(base, broken)
    f = broken / "records" / "bench" / "mid.jsonl"
    f.write_text(f.read_text().replace('"correct"', '"korrect"', 1))
    pr = pr_tree(tmp_path, broken)
    (pr / "records" / "bench" / "NOTES.md").write_text("a note\n")
    r = emu.run_job(broken, pr, tmp_path / "run")
    s = steps(r)
    assert r["conclusion"] == "failure" and s[AUDIT]["exit_code"] == 4
    assert "fails the gate: the PR's records cannot be audited:" in s[AUDIT]["output"]
    assert "mid.jsonl:1" in s[AUDIT]["output"]
