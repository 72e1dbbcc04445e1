r"""The RoPE base bound of Men et al. 2024 (arXiv:2405.14591): the reach of B_m = Σ cos(m θ_i) ≥ 0 against a loop
over the paper's sum, the published lower bounds at d = 128, and the facts the page states (not monotone in the base;
a head with pairs at frequency 0 never goes negative)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_core import PosEncError, rope_base_lower_bound, rope_inv_freq, rope_similarity_reach

#: Men et al. 2024's table of lower bounds at d = 128 (its §4 table, context lengths 1K … 1M), as Su reprints it
#: beside his own finer search (「Transformer升级之路：18、RoPE的底数选择原则」, kexue.fm/archives/10122, 2024-05-29):
#: both rounded to two significant digits.
LENGTHS = [1024 * 2**k for k in range(11)]
PAPER = [4.3e3, 1.6e4, 2.7e4, 8.4e4, 3.1e5, 6.4e5, 2.1e6, 7.8e6, 3.6e7, 6.4e7, 5.1e8]
SU = [4.3e3, 1.2e4, 2.7e4, 8.4e4, 2.3e5, 6.3e5, 2.1e6, 4.9e6, 2.4e7, 5.8e7, 6.5e7]


def loop_b(m: int, base: float, head_dim: int) -> float:
    r"""B_{m,θ} = Σ_{i=0}^{d/2−1} cos(m·base^(−2i/d)), the paper's sum, term by term."""
    return sum(math.cos(m * base ** (-2 * i / head_dim)) for i in range(head_dim // 2))


def loop_reach(base: float, head_dim: int, max_distance: int) -> int:
    for m in range(max_distance + 1):
        if loop_b(m, base, head_dim) < 0:
            return m
    return max_distance + 1


def two_digits(x: float) -> float:
    return float(f"{x:.1e}")


@settings(max_examples=25, deadline=None)
@given(st.floats(10.0, 5e4), st.sampled_from([8, 16, 32]))
def test_reach_is_the_first_distance_where_the_papers_sum_is_negative(base: float, head_dim: int) -> None:
    got = rope_similarity_reach(rope_inv_freq(head_dim, base=base), max_distance=3000)
    assert got == loop_reach(base, head_dim, 3000)


@pytest.mark.parametrize("k", range(4))  # 1K … 8K: the narrow windows need a fine grid, cheap at these lengths
def test_bound_rounds_to_the_published_value_on_a_fine_grid(k: int) -> None:
    # Steps of 1e-4 of the value, ±5% around it: fine enough for the 4K bound, whose base 2.7e4 works only in a
    # window under 30 wide (26 960 and 26 970 work, 26 950 and 26 980 fail) below the next working
    # bases near 2.86e4.
    published = SU[k]
    grid = np.linspace(0.95 * published, 1.05 * published, 1001)
    got = rope_base_lower_bound([LENGTHS[k]], head_dim=128, bases=grid)[0]
    assert two_digits(got) == published
    assert got <= PAPER[k] * 1.01  # the paper's coarser search never found a smaller base


@pytest.mark.parametrize("k", [4, 5])  # 16K, 32K: the paper's 3.1e5 at 16K is above the smallest working base
def test_longer_bounds_round_to_sus_finer_values(k: int) -> None:
    grid = np.linspace(0.9 * SU[k], 1.1 * SU[k], 201)
    got = rope_base_lower_bound([LENGTHS[k]], head_dim=128, bases=grid)[0]
    assert two_digits(got) == SU[k]
    assert got < PAPER[k]


def test_the_papers_printed_16k_base_turns_negative_before_16k() -> None:
    # the table's 3.1e5 (two digits) is not itself a working base at 16K: the loop finds B < 0 first at m = 12 223
    assert loop_reach(PAPER[4], 128, LENGTHS[4] - 1) == 12_223
    assert rope_similarity_reach(rope_inv_freq(128, base=PAPER[4]), max_distance=LENGTHS[4] - 1) == 12_223


def test_the_condition_is_not_monotone_in_the_base() -> None:
    # at 4K: a base that works, a larger one that fails, a larger one that works again (checked on the loop)
    # a window under 30 wide: 26 950 fails, 26 960 … 26 970 work, 26 980 and 27 500 fail, 28 650 works again
    cases = [
        (26_950.0, False),
        (26_960.0, True),
        (26_970.0, True),
        (26_980.0, False),
        (27_500.0, False),
        (28_650.0, True),
    ]
    for base, ok in cases:
        assert (loop_reach(base, 128, 4095) >= 4096) is ok
        assert (rope_similarity_reach(rope_inv_freq(128, base=base), max_distance=4095) >= 4096) is ok


@settings(max_examples=10, deadline=None)
@given(st.integers(16, 600), st.sampled_from([16, 32, 64]))
def test_bound_is_the_first_grid_base_that_holds(length: int, head_dim: int) -> None:
    grid = np.geomspace(20.0, 1e6, 80)
    got = rope_base_lower_bound([length], head_dim=head_dim, bases=grid)[0]
    for base in grid[grid < got] if not math.isnan(got) else grid:  # nan: no base of the grid holds
        assert min(loop_b(m, base, head_dim) for m in range(length)) < 0
    if not math.isnan(got):
        assert min(loop_b(m, got, head_dim) for m in range(length)) >= 0


@settings(max_examples=20, deadline=None)
@given(st.floats(2.0, 1e7), st.sampled_from([8, 32, 128]))
def test_half_the_pairs_at_frequency_zero_never_go_negative(base: float, head_dim: int) -> None:
    # Su's remark: with d/4 pairs at θ = 0, B = Σ (1 + cos mθ_i) ≥ 0 at every m, whatever the base
    inv = rope_inv_freq(head_dim // 2, base=base)
    assert rope_similarity_reach(np.concatenate([inv, np.zeros_like(inv)]), max_distance=20_000) == 20_001


def test_a_grid_that_never_reaches_gives_nan() -> None:
    assert math.isnan(rope_base_lower_bound([8192], head_dim=128, bases=[100.0, 200.0])[0])


@pytest.mark.parametrize(
    ("argument", "call"),
    [
        ("bases", lambda: rope_base_lower_bound([1024], head_dim=128, bases=[10.0, 5.0])),
        ("bases", lambda: rope_base_lower_bound([1024], head_dim=128, bases=[1.0])),
        ("context_lengths", lambda: rope_base_lower_bound([0], head_dim=128, bases=[10.0])),
        ("head_dim", lambda: rope_base_lower_bound([10], head_dim=7, bases=[10.0])),
        ("max_distance", lambda: rope_similarity_reach([1.0], max_distance=-1)),
        ("inv_freq", lambda: rope_similarity_reach([-1.0], max_distance=10)),
        ("still_pairs", lambda: rope_similarity_reach([1.0], max_distance=10, still_pairs=-1)),
    ],
)
def test_bad_arguments_are_refused_by_name(argument, call) -> None:
    with pytest.raises(PosEncError, match=argument):
        call()


@settings(max_examples=20, deadline=None)
@given(st.floats(10.0, 5e4), st.sampled_from([8, 16, 32]), st.integers(0, 6))
def test_still_pairs_add_one_each_to_the_papers_sum(base: float, head_dim: int, still: int) -> None:
    # B_m = s + Σ cos(m θ_i): s pairs that never turn (MLA's unrotated part), summed term by term
    def loop(max_distance: int) -> int:
        for m in range(max_distance + 1):
            if still + loop_b(m, base, head_dim) < 0:
                return m
        return max_distance + 1

    got = rope_similarity_reach(rope_inv_freq(head_dim, base=base), max_distance=3000, still_pairs=still)
    assert got == loop(3000)
