"""AUDITS v4 changed verdicts (statuses, values, margins, messages), not the report's descriptive
quantities (issue 43, "Targets"): the leaderboard rows, the adjacent pairs, the champions, Kendall
tau and the identified and harness-averaged orders keep their values on every bundled fixture.

tests/data/descriptive_v3.json holds them as the v3 code (commit d0b4150) computed them. It was
written once, with that commit checked out in a worktree::

    git worktree add /tmp/v3 d0b4150
    cd /tmp/v3 && LEADERBOARD_AUDIT_CACHE=off PYTHONPATH=/tmp/v3:<checkout>/tests \\
        <checkout>/.venv/bin/python <checkout>/tests/test_descriptive_unchanged.py \\
        <checkout>/tests/data/descriptive_v3.json

(the records are read from the worktree's fixtures/, byte-identical to this checkout's; with an
editable install of the checkout, drop its finder from ``sys.meta_path`` first so that /tmp/v3's
package is the one imported, as ``benchmarks/null_and_power.py`` does for ``AUDIT_CODE``).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURES = ("tiny", "demo", "real", "release/records")  # release: the paper's release format
EXPECTED = Path(__file__).parent / "data" / "descriptive_v3.json"
SEED, N_BOOT = 1234, 200  # the quantities below do not depend on either

ROW_KEYS = ("model", "reference", "min", "max", "spread", "robust", "optimistic", "config_lucky")
PAIR_KEYS = ("higher", "lower", "gap", "gap_items", "fragile_share", "robust_items", "higher_only", "lower_only")
PAIR_KEYS += ("reversing",)


def descriptive(report: dict[str, Any]) -> dict[str, Any]:
    """Per scope, the descriptive quantities of an audit report (JSON-ready)."""
    out = {}
    for name, s in sorted(report["scopes"].items()):
        d: dict[str, Any] = {
            "leaderboard": [{k: r.get(k) for k in ROW_KEYS} for r in s.get("leaderboard") or []],
            "pairs": [{k: p.get(k) for k in PAIR_KEYS} for p in s.get("pairs") or []],
        }
        ch = s.get("champions")
        if ch:
            d["champions"] = {
                "set": sorted(ch["set"]),
                "count": ch["count"],
                "per_config": {row["config"]: sorted(row["winners"]) for row in ch["per_config"]},
                "kendall_tau": ch["kendall_tau"],
            }
        for order in ("identified", "averaged"):
            o = s.get(order)
            if o:
                d[order] = {"tiers": o["tiers"], "edges": o["edges"], "edges_total": o["edges_total"]}
        out[name] = d
    return out


def compute(root: Path, fixture: str) -> dict[str, Any]:
    from leaderboard_audit.engine import audit
    from leaderboard_audit.records import load_records

    rep = audit(load_records(root / "fixtures" / fixture), seed=SEED, n_boot=N_BOOT)
    return descriptive(json.loads(json.dumps(rep)))  # what the report's JSON holds


def same(got: Any, want: Any, where: str = "") -> list[str]:
    """Where ``got`` differs from ``want`` (floats to 1e-12: far below any item resolution)."""
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        ok = (math.isnan(want) and math.isnan(got)) or abs(got - want) <= 1e-12
        return [] if ok else [f"{where}: {got!r} != {want!r}"]
    if isinstance(want, dict) and isinstance(got, dict):
        diff = [f"{where}: keys {sorted(set(got) ^ set(want))}"] if set(got) != set(want) else []
        return diff + [x for k in want if k in got for x in same(got[k], want[k], f"{where}.{k}")]
    if isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            return [f"{where}: {len(got)} entries != {len(want)}"]
        return [x for j, (g, w) in enumerate(zip(got, want)) for x in same(g, w, f"{where}[{j}]")]
    return [] if got == want and type(got) is type(want) else [f"{where}: {got!r} != {want!r}"]


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    return json.loads(EXPECTED.read_text())


# demo and real: whole audits, 2.5 to 5 s each (the slow tier)
@pytest.mark.parametrize(
    "fixture", [pytest.param(f, marks=pytest.mark.slow) if f in ("demo", "real") else f for f in FIXTURES]
)
def test_descriptive_quantities_keep_their_v3_values(fixture, expected):
    from helpers.paths import REPO

    if not (REPO / "fixtures" / fixture).is_dir():
        pytest.skip(f"fixtures/{fixture} is not in this checkout")
    want = expected[fixture]
    got = compute(REPO, fixture)
    assert set(got) == set(want)  # the same scopes
    for scope in want:  # nothing compared vacuously
        assert want[scope]["leaderboard"] and want[scope]["champions"]["per_config"]
        assert want[scope]["identified"]["tiers"] and want[scope]["averaged"]["tiers"]
    diff = same(got, want, fixture)
    assert not diff, diff[:20]


def test_the_comparison_sees_a_change():
    # a quantity moved by one item, a reordered tier, a lost scope and a new key are all reported
    want = {"s": {"leaderboard": [{"model": "a", "spread": 0.25}], "identified": {"tiers": [["a"], ["b"]]}}}
    assert same(json.loads(json.dumps(want)), want) == []
    moved = {"s": {"leaderboard": [{"model": "a", "spread": 0.25 + 1 / 8}], "identified": {"tiers": [["a"], ["b"]]}}}
    assert same(moved, want) == [".s.leaderboard[0].spread: 0.375 != 0.25"]
    assert same({"s": {**want["s"], "identified": {"tiers": [["b"], ["a"]]}}}, want) == [
        ".s.identified.tiers[0][0]: 'b' != 'a'",
        ".s.identified.tiers[1][0]: 'a' != 'b'",
    ]
    assert same({}, want) == [": keys ['s']"]
    assert same({"s": {**want["s"], "pairs": []}}, want) == [".s: keys ['pairs']"]
    assert same({"v": 1}, {"v": 1.0}) == []  # JSON writes 1.0 as 1.0, but an int 1 is the same number
    assert same(True, 1.0) == [": True != 1.0"]  # a bool is not a number


if __name__ == "__main__":  # write the expected values (run with the v3 code on PYTHONPATH)
    root = Path.cwd()
    values = {f: compute(root, f) for f in FIXTURES}
    Path(sys.argv[1]).write_text(json.dumps(values, indent=1, sort_keys=True) + "\n")
