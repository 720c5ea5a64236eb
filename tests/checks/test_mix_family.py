"""mix's Bonferroni family is fixed before the data (AUDITS v5, review U2).

v4 divided 0.05 by the number of verdicts that *did* change without some benchmark, a family
the data select: a verdict that changed once by chance, with p = 2/101, was judged at 0.05 / 1
and failed mix (6.7 % [5.2, 8.4] of null boards). v5 divides by every pooled verdict of the
rerun checks x every benchmark left out, whether or not it changed.
"""

from __future__ import annotations

from types import SimpleNamespace

from leaderboard_audit.checks.mix import CHECK as MIX
from leaderboard_audit.checks.mix import SPECIFIC_Q, board_draws, family_size, specific_level
from leaderboard_audit.checks import Thresholds

from helpers.mix import reduced_entry


def _board(p: float, *, n_verdicts: int = 10, benchmarks: tuple[str, ...] = ("a", "b", "c", "d"), draws: int = 100):
    """A planted board: ``n_verdicts`` pooled verdicts, and exactly one of them (axes[pooled],
    warn -> fail) changes status without benchmark ``a``, with Monte-Carlo p ``p``."""
    scope = SimpleNamespace(
        full=SimpleNamespace(benchmarks=benchmarks),
        shape=(6, 100, 4),
        thresholds=SimpleNamespace(mix_draws=draws),
    )
    basis = {
        "checks": ["axes", "band"],
        "full": {},
        "verdicts": [{"id": f"band[pooled-m{j}]", "check": "band", "status": "pass"} for j in range(n_verdicts - 1)]
        + [{"id": "axes[pooled]", "check": "axes", "status": "warn"}],
    }
    change = {"check": "axes", "id": "axes[pooled]", "before": "warn", "after": "fail", "p": p, "p_is_bound": False}
    without = {b: reduced_entry([change] if b == "a" else []) for b in benchmarks}
    section = MIX.section_of(scope, basis, without)
    return section, {v["id"]: v for v in MIX.judge(scope, section)}


def test_one_chance_change_at_p_2_of_101_does_not_fail():
    # the review's failing null boards: one changed verdict, p = 2/101, 100 drops. v4's level was
    # 0.05 / 1 (the one change) and mix failed; v5's is 0.05 / (10 verdicts x 4 benchmarks)
    section, v = _board(2 / 101)
    assert section["family"] == 40 and section["changes_total"] == 1
    assert section["specific_level"] == 0.05 / 40
    assert v["mix[a]"]["status"] == "pass" and v["mix[a]"]["value"] == 0
    assert all(v[f"mix[{b}]"]["status"] == "pass" for b in "bcd")


def test_the_level_does_not_depend_on_how_many_verdicts_changed():
    # the same family whether 1 or 4 of its cells changed: the level is fixed before the data
    one, _ = _board(2 / 101)
    scope = SimpleNamespace(full=SimpleNamespace(benchmarks=tuple("abcd")), thresholds=SimpleNamespace(mix_draws=100))
    basis = {"checks": ["band"], "full": {}, "verdicts": [{"id": f"v{j}", "check": "band"} for j in range(10)]}
    ch = {"check": "band", "id": "v0", "before": "pass", "after": "warn"}
    many = MIX.section_of(scope, basis, {b: reduced_entry([ch]) for b in "abcd"})
    assert many["changes_total"] == 4 and many["specific_level"] == one["specific_level"] == 0.05 / 40


def test_a_change_no_random_drop_makes_still_fails():
    # power is kept: with board_draws(100, F) drops and no hit, p = 1 / (draws + 1) <= 0.05 / F
    section, _ = _board(0.5)
    draws = section["draws"]
    assert draws == board_draws(100, 40) == 799 and 1 / (draws + 1) <= section["specific_level"]
    section, v = _board(1 / (draws + 1))
    assert v["mix[a]"]["status"] == "fail" and v["mix[a]"]["value"] == 1
    assert "Bonferroni over the board's 40 pooled verdicts x benchmarks, 799 drops" in v["mix[a]"]["message"]
    # one more hit: p = 2 / 800 > 0.05 / 40
    assert _board(2 / (draws + 1))[1]["mix[a]"]["status"] == "pass"


def test_draws_let_a_monte_carlo_p_reach_the_level_for_every_family():
    for n_verdicts in range(1, 60):
        for n_b in range(3, 9):
            f = family_size(n_verdicts, n_b)
            d = board_draws(100, f)
            assert f == n_verdicts * n_b and d >= 100
            assert 1 / (d + 1) <= specific_level(f) * (1 + 1e-12)  # the smallest p reaches the level
    assert family_size(0, 4) == 1 and specific_level(family_size(0, 4)) == SPECIFIC_Q


def test_a_board_where_nothing_changes_keeps_the_v4_section():
    # nothing is judged, so such reports stay byte-identical to v4's
    scope = SimpleNamespace(full=SimpleNamespace(benchmarks=tuple("abc")), thresholds=Thresholds())
    basis = {"checks": ["band"], "full": {}, "verdicts": [{"id": "v0", "check": "band"}]}
    s = MIX.section_of(scope, basis, {b: reduced_entry([]) for b in "abc"})
    assert (s["draws"], s["specific_level"], s["changes_total"]) == (100, 0.05, 0) and "family" not in s
    assert s["level_rule"] == "Bonferroni over every changed verdict of the board (AUDITS v4)"


def test_bonferroni_over_the_fixed_family_bounds_the_false_fail_rate():
    # the bound the rule rests on, by simulation of the rule itself: F cells, each changing by
    # chance with its own probability pi (some rare), each change judged with D random drops;
    # a fail needs (hits + 1) / (D + 1) <= 0.05 / F. v4's data-selected divisor exceeds 5 %
    import numpy as np

    rng = np.random.default_rng(11)
    F, boards = 40, 5_000
    pi = np.r_[np.full(20, 0.005), np.full(20, 0.1)]  # rare chance changes, and common ones
    changed = rng.random((boards, F)) < pi
    n_changed = changed.sum(axis=1, keepdims=True)

    def rate(level: np.ndarray) -> float:
        draws = np.maximum(100, np.ceil(0.05 / level * 1.0).astype(int) - 1)
        hits = rng.binomial(draws, pi)
        p = (hits + 1) / (draws + 1)
        return float(np.mean(np.any(changed & (p <= level + 1e-15), axis=1)))

    v5 = rate(np.full((boards, F), 0.05 / F))
    v4 = rate(np.broadcast_to(0.05 / np.maximum(n_changed, 1), (boards, F)).astype(float))
    assert v5 <= 0.05 and v4 > 0.05, (v5, v4)
