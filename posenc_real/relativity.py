r"""Relativity, for real: a trained RoPE model sees positions only as differences, up to float error.

RoPE rotates the query at position m by the angles m·θ_i and the key at n by n·θ_i, so their dot product depends on
n − m alone (Su et al. 2021, arXiv:2104.09864, §3.4.2): adding Δ to every position leaves every attention score, hence
every logit, unchanged in exact arithmetic. Llama has no other position signal. transformers forms the angles
p·θ_i in float32 (``LlamaRotaryEmbedding.forward``: ``position_ids.float() * inv_freq``, one rounding), and a float32
number near x is only known to half its spacing, at most 2⁻²⁴·|x|, so the rotation at position p is off by up to
p·θ_i·2⁻²⁴ radians: an error that grows with the position and shows as logits that move a little more the larger Δ
is. The two runs round differently because their angles differ, not their differences.

Reversing or shuffling the positions (the tokens and the causal mask stay as they are; only ``position_ids`` change)
gives every query–key pair a wrong distance, and the model's loss on the text rises: position matters, and only as
a difference. Every number here comes from transformers' own forward (:func:`posenc_real.load.forward`); the loss
is transformers' own (``labels=`` the input ids: the mean next-token negative log-likelihood, in nats).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .load import RealModel, forward

__all__ = [
    "ORDERS",
    "SHIFT_GRID",
    "OrderLosses",
    "ShiftCurve",
    "angle_rounding",
    "base_logits",
    "order_losses",
    "order_positions",
    "shift_change",
    "shifted_logit_change",
]

#: The shifts the curve is measured at: from one token to far past the model's 8,192 training positions.
SHIFT_GRID = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 4_096, 8_192, 16_384, 32_768, 65_536, 100_000)

#: The position orders compared by :func:`order_losses`: the text's own, reversed, and a seeded shuffle.
ORDERS = ("in_order", "reversed", "shuffled")


@dataclass(frozen=True)
class ShiftCurve:
    r"""max |logits(positions + Δ) − logits(positions)| per shift Δ, over every position and vocabulary entry."""

    deltas: np.ndarray  # (K,) int64
    max_change: np.ndarray  # (K,) float64
    largest_position: np.ndarray  # (K,) L − 1 + Δ, the largest position whose angles were formed
    logit_span: float  # max |logits| at the text's own positions: the scale the changes are measured against
    length: int  # tokens


def base_logits(real: RealModel, ids: np.ndarray) -> Any:
    r"""The (L, V) logits at positions 0 … L − 1 (a torch tensor): what every shift is compared with."""
    return forward(real, ids).logits[0]


def shift_change(real: RealModel, ids: np.ndarray, delta: int, *, base: Any = None) -> float:
    r"""max |logits at positions 0 + Δ … L − 1 + Δ − logits at 0 … L − 1|, from two of transformers' forwards, or
    one when ``base`` (:func:`base_logits` of the same ids) is given."""
    base = base_logits(real, ids) if base is None else base
    length = int(np.asarray(ids).size)
    shifted = forward(real, ids, np.arange(length) + int(delta)).logits[0]  # (L, V)
    return float((shifted - base).abs().max())


def shifted_logit_change(real: RealModel, ids: np.ndarray, deltas: tuple[int, ...] = SHIFT_GRID) -> ShiftCurve:
    r"""The logits' largest change when every position is shifted by each Δ in ``deltas`` (one forward per Δ)."""
    length = int(np.asarray(ids).size)
    base = base_logits(real, ids)  # (L, V)
    changes = []
    for delta in deltas:
        shifted = forward(real, ids, np.arange(length) + int(delta)).logits[0]  # (L, V)
        changes.append(float((shifted - base).abs().max()))
    steps = np.asarray(deltas, dtype=np.int64)
    return ShiftCurve(
        deltas=steps,
        max_change=np.asarray(changes, dtype=np.float64),
        largest_position=steps + length - 1,
        logit_span=float(base.abs().max()),
        length=length,
    )


def angle_rounding(positions: np.ndarray, inv_freq_max: float = 1.0) -> np.ndarray:
    r"""Half the float32 spacing at the fastest angle p·θ₀ (θ₀ = ``inv_freq_max``, 1 for RoPE's first pair): how far
    the angle transformers forms in float32 can be from the true one, in radians (IEEE 754: round to nearest)."""
    angles = np.asarray(positions, dtype=np.float64) * inv_freq_max
    return np.spacing(angles.astype(np.float32)).astype(np.float64) / 2


def order_positions(length: int, order: str, *, seed: int = 0) -> np.ndarray:
    r"""The ``position_ids`` of one of :data:`ORDERS` for ``length`` tokens: 0 … L − 1, L − 1 … 0, or a permutation
    drawn with ``seed`` (NumPy's default generator)."""
    if order == "in_order":
        return np.arange(length)
    if order == "reversed":
        return np.arange(length)[::-1].copy()
    if order == "shuffled":
        return np.random.default_rng(seed).permutation(length)
    raise ValueError(f"order must be one of {ORDERS}, got {order!r}")


@dataclass(frozen=True)
class OrderLosses:
    r"""The model's mean next-token loss (nats) on one text, with the positions in each of :data:`ORDERS`."""

    orders: tuple[str, ...]
    loss: np.ndarray  # (len(orders),) float64, nats per predicted token
    length: int
    seed: int


def order_losses(real: RealModel, ids: np.ndarray, *, seed: int = 0, orders: tuple[str, ...] = ORDERS) -> OrderLosses:
    r"""transformers' own loss (``labels`` = the ids: mean −log p(token t+1 | tokens ≤ t) over t, nats) with the
    positions in each of ``orders`` (default: in order, reversed and shuffled; one forward each); the tokens and the
    causal mask are the same in all."""
    length = int(np.asarray(ids).size)
    losses = [
        float(forward(real, ids, order_positions(length, order, seed=seed), labels=True).loss) for order in orders
    ]
    return OrderLosses(orders=tuple(orders), loss=np.asarray(losses, dtype=np.float64), length=length, seed=seed)
