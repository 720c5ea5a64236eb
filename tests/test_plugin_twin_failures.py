"""With one benchmark, a failing test that also judges pooled's identical verdict prints the
evidence once and names the pooled twin in one line (issue 22: each pooled copy was printed
in full beside its benchmark twin)."""

from __future__ import annotations

from pathlib import Path

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "tiny"


def test_a_pooled_twin_is_named_not_printed_again(pytester):
    res = pytester.runpytest(f"--audit={TINY}", "-p", "no:cacheprovider", "-k", "band", "--audit-boot", "200")
    out = res.stdout.str()
    assert "band[tiny-alpha]: FAIL  value 0.250" in out
    assert "band[pooled-alpha]: FAIL" not in out
    assert "band[pooled-alpha]: the same verdict (FAIL; one benchmark: pooled holds its items)" in out
