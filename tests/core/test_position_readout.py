r"""Where position lives once added to the word (page 3's FAQ): a linear map cannot take it apart from the word.

* :func:`posenc_core.position_readout`'s ceiling :math:`\sum_k\lambda_k^2/(\lambda_k+\sigma^2)/\sum_k\lambda_k` against
  a least-squares fit on many independent word draws (the population optimum it claims to be), and against the
  isotropic case, where it is :math:`\lambda/(\lambda+\sigma^2)` = 0.5 for equal powers;
* the curve decoder against a naive nearest-row loop;
* :func:`posenc_core.residual_stream_probe` with ``read="word"``: random blocks without the residual stream make the
  word as unreadable as the position code, for every seed tried.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc_core as pc


def test_ceiling_is_what_least_squares_reaches_on_many_word_draws() -> None:
    length, dim, draws = 128, 8, 400
    table = pc.sinusoidal(length, dim)
    rng = np.random.default_rng(0)
    p = np.tile(table, (draws, 1))  # (draws·L, d): every position many times
    h = p + rng.standard_normal(p.shape) * math.sqrt(0.5)
    features = np.c_[h, np.ones(h.shape[0])]
    weights, *_ = np.linalg.lstsq(features, p, rcond=None)  # the best linear map, fitted
    fresh = p + rng.standard_normal(p.shape) * math.sqrt(0.5)
    error = np.c_[fresh, np.ones(fresh.shape[0])] @ weights - p
    r2 = 1.0 - np.sum(error**2) / np.sum((p - p.mean(axis=0)) ** 2)
    ceiling = pc.position_readout(table).ceiling  # closed form: no fit, no draw
    assert abs(r2 - ceiling) < 0.01, (r2, ceiling)


def test_ceiling_is_one_half_for_an_isotropic_code_of_the_word_power() -> None:
    r"""Columns 1 … d of a Sylvester–Hadamard matrix, scaled by √½: mean 0, covariance ½·I, so λ/(λ + σ²) = ½."""
    hadamard = np.array([[1.0]])
    while hadamard.shape[0] < 64:
        hadamard = np.block([[hadamard, hadamard], [hadamard, -hadamard]])
    table = math.sqrt(0.5) * hadamard[:, 1:9]  # (64, 8)
    assert pc.position_readout(table).ceiling == pytest.approx(0.5, abs=1e-12)


def test_curve_decoder_is_the_nearest_row() -> None:
    length, dim = 96, 8
    table = pc.sinusoidal(length, dim)
    words = np.random.default_rng(3).standard_normal((length, dim)) * math.sqrt(0.5)  # the function's draw, seed 3
    h = words + table
    nearest = [min(range(length), key=lambda m, x=x: float(np.sum((x - table[m]) ** 2))) for x in h]
    r2 = 1.0 - np.sum((table[nearest] - table) ** 2) / np.sum((table - table.mean(axis=0)) ** 2)
    assert pc.position_readout(table, seed=3).curve == pytest.approx(r2, abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_page_three_sum_claim_holds_for_every_seed_tried(seed: int) -> None:
    r"""Probe ≤ ceiling, and the ceiling stays under 0.75 of the curve decoder (page 3's check_sum)."""
    r = pc.position_readout(pc.sinusoidal(1024, 64), seed=seed)
    assert r.linear <= r.ceiling <= 0.75 * r.curve, r


@pytest.mark.parametrize("seed", range(6))
def test_random_blocks_without_the_residual_stream_erase_the_word_too(seed: int) -> None:
    table = pc.sinusoidal(1024, 64)
    word = pc.residual_stream_probe(table, layers=6, residual=False, seed=seed, read="word")
    position = pc.residual_stream_probe(table, layers=6, residual=False, seed=seed)
    assert word[0] > 0.5 and position[0] > 0.4  # both readable at the input
    assert word[-1] < 0.1 and position[-1] < 0.1  # neither after 6 replacing blocks


def test_probe_read_is_checked_and_both_is_the_two_reads_stacked() -> None:
    table = pc.sinusoidal(64, 8)
    with pytest.raises(pc.PosEncError, match="read"):
        pc.residual_stream_probe(table, layers=1, read="all")
    both = pc.residual_stream_probe(table, layers=3, residual=False, read="both")
    for row, read in enumerate(("position", "word")):
        single = pc.residual_stream_probe(table, layers=3, residual=False, read=read)
        np.testing.assert_allclose(both[row], single, rtol=0, atol=1e-12)
