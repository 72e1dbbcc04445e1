r"""Section 1 on the real model: relativity to float error, and the loss with positions out of order.

The expected values are computed here from transformers' own outputs (logits and the model's own ``forward``), not
from :mod:`posenc_real.relativity`; the float-error bound comes from where the error is made: transformers forms the
angles p·θᵢ in float32. In float64 angles the same shift must change the logits by float64 rounding only, the float32
change scaled by the ratio of the two unit roundoffs; with transformers' own float32 angles in a float64 model, by as
much as in the float32 model.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from posenc_real import RealModel, tokenize
from posenc_real.relativity import ORDERS, angle_rounding, order_losses, order_positions, shifted_logit_change

TEXT = (
    "The ferry left the harbour at seven, crossed the bay in forty minutes and came back before the market opened. "
    "On windy days the captain waited for the tide, and the passengers waited with him on the pier."
)
U32, U64 = 2.0**-24, 2.0**-53  # unit roundoff of float32 and float64 (round to nearest)


@pytest.fixture(scope="module")
def ids(real: RealModel) -> np.ndarray:
    return tokenize(real, TEXT)


def _logits(model: torch.nn.Module, ids: np.ndarray, positions: np.ndarray) -> torch.Tensor:
    r"""The model's logits with the plain causal mask (an explicit mask of ones: without one, transformers reads
    positions that do not rise by 1 as packed sequences and masks across them)."""
    tokens = torch.tensor(ids)[None]
    with torch.no_grad():
        out = model(tokens, attention_mask=torch.ones_like(tokens), position_ids=torch.tensor(positions)[None])
    return out.logits[0]


def test_the_logits_change_measured_is_transformers_own(real: RealModel, ids: np.ndarray) -> None:
    curve = shifted_logit_change(real, ids, (1, 100_000))
    base = _logits(real.model, ids, np.arange(ids.size))
    for delta, measured in zip(curve.deltas, curve.max_change, strict=True):
        shifted = _logits(real.model, ids, np.arange(ids.size) + delta)
        assert measured == float((shifted - base).abs().max())
    assert curve.logit_span == float(base.abs().max())
    assert list(curve.largest_position) == [ids.size, ids.size - 1 + 100_000]


def test_a_far_shift_changes_the_logits_by_float_error_that_comes_from_the_float32_angles(
    real: RealModel, ids: np.ndarray
) -> None:
    delta = 100_000  # far past the 8,192 positions the model was trained with
    positions = np.arange(ids.size)
    change32 = float((_logits(real.model, ids, positions + delta) - _logits(real.model, ids, positions)).abs().max())
    # Not zero, and small: a float32 rounding of angles up to 2⁻²⁴·(L + Δ) ≈ 0.006 rad moves no logit by more than a
    # thousandth of their span (the page's claim).
    span = float(_logits(real.model, ids, positions).abs().max())
    assert 0 < change32 < 1e-3 * span

    wide = copy.deepcopy(real.model).double()
    # transformers' own float32 angles, the rest of the model in float64: the change stays as large.
    own = float((_logits(wide, ids, positions + delta) - _logits(wide, ids, positions)).abs().max())
    assert change32 / 3 < own < change32 * 3

    # Angles in float64 (transformers' formula, inv_freq = θ^(−2i/d), the rest as LlamaRotaryEmbedding does):
    # the change falls by the ratio of the unit roundoffs, 2⁻⁵³ / 2⁻²⁴ ≈ 2·10⁻⁹ (×1000 for the arithmetic around).
    rotary = wide.model.rotary_emb
    inv_freq = 1.0 / (real.rope_theta ** (torch.arange(0, real.head_dim, 2, dtype=torch.float64) / real.head_dim))

    def exact(x: torch.Tensor, position_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        freqs = position_ids[..., None].double() * inv_freq  # (B, L, d/2), float64
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)

    rotary.forward = exact
    change64 = float((_logits(wide, ids, positions + delta) - _logits(wide, ids, positions)).abs().max())
    assert change64 < change32 * (U64 / U32) * 1e3


def test_the_rounding_line_is_half_the_float32_spacing_at_the_largest_angle() -> None:
    positions = np.array([1, 255, 1_000, 8_191, 100_255])
    # float32 spacing at x in [2^k, 2^(k+1)) is 2^(k−23); half of it bounds a rounding
    expected = np.array([2.0 ** (np.floor(np.log2(p)) - 24) for p in positions])
    np.testing.assert_array_equal(angle_rounding(positions), expected)
    assert np.all(angle_rounding(positions) <= U32 * positions)


def _nll(model: torch.nn.Module, ids: np.ndarray, positions: np.ndarray) -> float:
    r"""Mean −log p(token t+1 | tokens ≤ t) from the logits, in float64 NumPy (not the model's loss)."""
    logits = _logits(model, ids, positions).double().numpy()[:-1]  # (L − 1, V)
    top = logits.max(axis=1, keepdims=True)
    log_z = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
    return float(np.mean(log_z - logits[np.arange(ids.size - 1), ids[1:]]))


def test_reversed_and_shuffled_positions_raise_the_loss(real: RealModel, ids: np.ndarray) -> None:
    losses = order_losses(real, ids, seed=3)
    assert losses.orders == ORDERS == ("in_order", "reversed", "shuffled")
    by_hand = {
        "in_order": np.arange(ids.size),
        "reversed": ids.size - 1 - np.arange(ids.size),
        "shuffled": np.random.default_rng(3).permutation(ids.size),
    }
    expected = [_nll(real.model, ids, by_hand[order]) for order in ORDERS]
    np.testing.assert_allclose(losses.loss, expected, rtol=1e-5)
    in_order, reversed_, shuffled = expected
    assert reversed_ > in_order and shuffled > in_order
    for order in ORDERS:
        assert sorted(order_positions(ids.size, order, seed=3)) == list(range(ids.size))  # a permutation each


def test_out_of_order_positions_keep_the_causal_mask_every_token_still_sees_its_past(
    real: RealModel, ids: np.ndarray
) -> None:
    r"""Reversed positions change the rotations, not the mask: the first layer's attention still puts weight on earlier
    tokens (were the positions read as one packed sequence a token, each token would see only itself)."""
    from posenc_real import forward

    reversed_ = order_positions(ids.size, "reversed")
    weights = forward(real, ids, reversed_, attentions=True).attentions[0][0]  # (H, L, L)
    below = torch.tril(weights, diagonal=-1).sum(-1)[:, 1:]  # weight on earlier tokens, every query but the first
    assert float(below.min()) > 0.01
    assert float(torch.triu(weights, diagonal=1).abs().max()) == 0.0  # and none on later ones


def test_an_unknown_order_is_refused() -> None:
    with pytest.raises(ValueError, match="order must be one of"):
        order_positions(8, "backwards")
