"""Mutation pass over the verdicts-v3 code (docs/audits.md, "Mutation pass").

Each mutant is applied, one at a time, to a scratch copy of the repository, and the
verdict, planted, margin, pair, beyond and report-scale tests run against it (``-x``).
A mutant that no test catches is a survivor. ``ALL=1`` runs every mutant (the default);
``SURVIVORS=1`` only those that survived the first pass.

    python benchmarks/mutation_v3.py
"""

import os
import pathlib
import shutil
import subprocess
import tempfile

SRC = pathlib.Path(__file__).resolve().parents[1]
MUTANTS_ALL = [
    (
        "pairs: identified at p < alpha (strict)",
        "leaderboard_audit/metrics/pairs.py",
        "if le(p, alpha) and h_o != l_o:",
        "if p < alpha and h_o != l_o:",
    ),
    (
        "pairs: Holm-free p doubled",
        "leaderboard_audit/metrics/pairs.py",
        "p = float(pvals[j])",
        "p = min(1.0, 2 * float(pvals[j]))",
    ),
    (
        "pairs: manufactured ignores the gap",
        "leaderboard_audit/metrics/pairs.py",
        "manufactured = bool(tie and gap_items != 0)",
        "manufactured = bool(tie)",
    ),
    (
        "manufactured: value sign by higher > lower",
        "leaderboard_audit/checks/manufactured.py",
        's = 1.0 if p["higher_only"] >= p["lower_only"] else -1.0',
        's = 1.0 if p["higher_only"] > p["lower_only"] else -1.0',
    ),
    (
        "manufactured: printed tie margin 0",
        "leaderboard_audit/checks/manufactured.py",
        "        margin = -1.0\n        if side is not None:",
        "        margin = 0.0\n        if side is not None:",
    ),
    (
        "manufactured: tie checked after reversing",
        "leaderboard_audit/checks/manufactured.py",
        '    if p["gap_items"] == 0:\n        margin = -1.0',
        '    if p["gap_items"] == 0 and p["reversing"] == 0:\n        margin = -1.0',
    ),
    (
        "manufactured: fragile warn margin positive",
        "leaderboard_audit/checks/manufactured.py",
        "margin = exact(t.fragile_share - fs) + 0.0",
        "margin = exact(fs - t.fragile_share) + 0.0",
    ),
    (
        "power: items_needed rounds half down",
        "leaderboard_audit/metrics/power.py",
        "return (2 * num + den) // (2 * den)",
        "return (2 * num + den - 1) // (2 * den)",
    ),
    (
        "power: scan starts at the estimate",
        "leaderboard_audit/metrics/power.py",
        "else max(1, int(estimate // 2))",
        "else max(1, int(estimate))",
    ),
    (
        "power: min disagreements off by one",
        "leaderboard_audit/metrics/power.py",
        "    while 2.0 * 0.5**n > alpha + 1e-15:\n        n += 1\n    return n",
        "    while 2.0 * 0.5**n > alpha + 1e-15:\n        n += 1\n    return n + 1",
    ),
    (
        "ranking: printed ties count as identified",
        "leaderboard_audit/checks/ranking.py",
        'ok = [p for p in adj if p["identified"] == "higher" and not p["printed_tie"]]',
        'ok = [p for p in adj if p["identified"] == "higher"]',
    ),
    (
        "ranking: fail margin from the share",
        "leaderboard_audit/checks/ranking.py",
        "        margin = -float(len(bad))",
        "        margin = margin",
    ),
    (
        "compression: undefined corr passes",
        "leaderboard_audit/checks/compression.py",
        'status, why = WARN, f"corr(disc, fragility) undefined: {_undefined_reason(c)}"',
        'status, why = PASS, f"corr(disc, fragility) undefined: {_undefined_reason(c)}"',
    ),
    (
        "compression: margin from the CI low",
        "leaderboard_audit/checks/compression.py",
        "margin = -1.0 if corr is None else exact(0.0 - corr) + 0.0",
        "margin = -1.0 if corr is None else exact(0.0 - value) + 0.0",
    ),
    (
        "champions: warn margin on items",
        "leaderboard_audit/checks/champions.py",
        '    margin = float(1 - ch["count"]) + 0.0',
        "    margin = exact(t.champion_items - value) + 0.0",
    ),
    (
        "mix: specific at q <= level",
        "leaderboard_audit/checks/mix.py",
        "specific = [x for x in changes if x[3] is not None and x[3] < level]",
        "specific = [x for x in changes if x[3] is not None and x[3] <= level]",
    ),
    (
        "mix: no Bonferroni",
        "leaderboard_audit/checks/mix.py",
        "return SPECIFIC_Q / max(1, n_benchmarks)",
        "return SPECIFIC_Q",
    ),
    (
        "mix: sign change counts defined<->undefined",
        "leaderboard_audit/metrics/leave_one_out.py",
        "return a is not None and b is not None and sign(a) != sign(b)",
        "return sign(a) != sign(b)",
    ),
    (
        "mix: crossing side strict",
        "leaderboard_audit/checks/mix.py",
        "return exact(val) >= exact(thr)",
        "return exact(val) > exact(thr)",
    ),
    (
        "mix: random drops without relabel",
        "leaderboard_audit/checks/mix.py",
        "    return replace(red, items=replace(red.items, benchmark=dealt))",
        "    return full.select_items(np.sort(keep))",
    ),
    ("flip: min class 5", "leaderboard_audit/metrics/flip.py", "MIN_CLASS_ITEMS = 10", "MIN_CLASS_ITEMS = 5"),
    (
        "flip: unstratified (one class only)",
        "leaderboard_audit/metrics/flip.py",
        "    for cls in (0, 1):\n        present",
        "    for cls in (1,):\n        present",
    ),
    (
        "flip: CI at 90%",
        "leaderboard_audit/metrics/flip.py",
        "ci = list(percentile_ci(finite)) if finite.size else None",
        "ci = list(np.percentile(finite, [5, 95])) if finite.size else None",
    ),
    (
        "exact: -0.0 kept",
        "leaderboard_audit/metrics/exact.py",
        "return round(float(x), DECIMALS) + 0.0",
        "return round(float(x), DECIMALS)",
    ),
    (
        "auditor: skipped sections computed",
        "leaderboard_audit/engine/scope.py",
        "if check.section is not None and (reason is None or check.section_when_skipped):",
        "if check.section is not None:",
    ),
]
SURV = [
    "pairs: identified at p < alpha (strict)",
    "pairs: manufactured ignores the gap",
    "manufactured: value sign by higher > lower",
    "power: scan starts at the estimate",
    "power: min disagreements off by one",
    "ranking: printed ties count as identified",
    "ranking: fail margin from the share",
    "mix: specific at q <= level",
    "mix: sign change counts defined<->undefined",
    "mix: random drops without relabel",
    "exact: -0.0 kept",
    "auditor: skipped sections computed",
]
MUTANTS = [m for m in MUTANTS_ALL if m[0] in SURV] if os.environ.get("SURVIVORS") else MUTANTS_ALL
TESTS = [
    "tests/checks/test_verdicts.py",
    "tests/checks/test_verdicts_planted.py",
    "tests/test_verdicts_margins.py",
    "tests/metrics/test_pairs.py",
    "tests/checks/test_beyond_checks.py",
    "tests/test_verdicts_regressions.py",
    "tests/metrics/test_flip.py",
    "tests/metrics/test_pairs_planted.py",
    "tests/reports/test_scale.py",
]
work = pathlib.Path(tempfile.mkdtemp(prefix="mutants-")) / "repo"
survived = []
for name, path, old, new in MUTANTS:
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(SRC, work, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__"))
    f = work / path
    text = f.read_text()
    assert text.count(old) == 1, (name, text.count(old))
    f.write_text(text.replace(old, new))
    r = subprocess.run(
        [
            str(SRC / ".venv/bin/python"),
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            *TESTS,
        ],
        cwd=work,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(work), "HOME": str(work.parent)},
    )
    killed = r.returncode != 0
    last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-200:]
    print(f"{'KILLED ' if killed else 'SURVIVED'} {name}: {last}", flush=True)
    if not killed:
        survived.append(name)
print(f"{len(MUTANTS) - len(survived)} of {len(MUTANTS)} killed; survivors: {survived}")
