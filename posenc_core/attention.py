r"""Scaled dot-product attention, with an optional additive bias and causal mask.

.. math::
    \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d}} + B\right) V

(Vaswani et al. 2017, arXiv:1706.03762, §3.2.1). ``B`` is where relative schemes put position: Shaw's and T5's
learned scalars per offset, ALiBi's linear penalty. Without any of them — and without position added to the inputs —
attention is permutation-equivariant: shuffling the tokens shuffles the output rows the same way and changes nothing
else (see :func:`posenc_core.analysis.permutation_equivariance_residual`).

Shapes: q (…, Lq, d), k (…, Lk, d), v (…, Lk, d_v); scores and weights (…, Lq, Lk). When Lq < Lk the queries
are the *last* Lq positions (a decoder extending a cache), which is where the causal mask puts its diagonal.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import PosEncError, as_array, as_bool, as_float, as_query_key_lengths, check_elements

__all__ = ["attention", "attention_scores", "causal_mask", "relative_positions", "softmax"]


def softmax(x: object, axis: int = -1) -> np.ndarray:
    r"""Numerically stable :math:`e^{x_j - \max x} / \sum_k e^{x_k - \max x}` along ``axis``.

    −inf entries get weight 0 (that is how masks work); a slice that is entirely −inf has no distribution and
    is an error, not a row of NaN. NaN and +inf are errors.
    """
    x = as_array("x", x, min_ndim=1, finite=False)
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer) or not -x.ndim <= axis < x.ndim:
        raise PosEncError(f"axis must be an integer in [{-x.ndim}, {x.ndim - 1}], got {axis!r}")
    if np.isnan(x).any() or np.isposinf(x).any():
        raise PosEncError("x must not contain nan or +inf (−inf is allowed: it masks an entry)")
    top = np.max(x, axis=axis, keepdims=True)
    if np.isneginf(top).any():
        raise PosEncError("softmax over a slice that is entirely −inf (every key masked) is undefined")
    with np.errstate(over="ignore"):  # x − max may overflow to −inf (e.g. −1e308 − 1e308): weight 0, as it should be
        e = np.exp(x - top)
    return e / np.sum(e, axis=axis, keepdims=True)


def relative_positions(query_length: int, key_length: int | None = None) -> np.ndarray:
    r"""The (Lq, Lk) matrix of :math:`j - i` (key minus query), with queries aligned to the last keys.

    Query row r sits at absolute position i = Lk − Lq + r, so for Lq = Lk this is the familiar Toeplitz matrix
    with 0 on the diagonal, negative below it (keys in the past). More queries than keys is an error.
    """
    query_length, key_length = as_query_key_lengths(query_length, key_length)
    i = np.arange(query_length, dtype=np.int64) + (key_length - query_length)
    j = np.arange(key_length, dtype=np.int64)
    return j[None, :] - i[:, None]  # (Lq, Lk)


def causal_mask(query_length: int, key_length: int | None = None) -> np.ndarray:
    r"""Boolean (Lq, Lk) matrix, True where key j lies in the future of query i (j > i): those get −inf."""
    return relative_positions(query_length, key_length) > 0


def attention_scores(q: object, k: object, *, bias: object = None, scale: float | None = None) -> np.ndarray:
    r"""Logits :math:`s \cdot QK^\top + B`, shape (…, Lq, Lk); ``scale`` defaults to :math:`1/\sqrt{d}`."""
    q = as_array("q", q, min_ndim=2)
    k = as_array("k", k, min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise PosEncError(f"q and k must share their last dimension, got {q.shape} and {k.shape}")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else as_float("scale", scale)
    try:
        lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    except ValueError as exc:
        raise PosEncError(
            f"the leading (batch/head) dimensions of q {q.shape} and k {k.shape} do not broadcast"
        ) from exc
    check_elements("attention scores", (*lead, q.shape[-2], k.shape[-2]))
    with np.errstate(over="ignore", invalid="ignore"):  # checked just below, with a message instead of a warning
        scores = (q * scale if scale != 1.0 else q) @ np.swapaxes(k, -1, -2)  # scaling q is cheaper than the scores
    check_finite_scores(scores)
    if bias is not None:
        bias = as_array("bias", bias, finite=False)
        if np.isnan(bias).any() or np.isposinf(bias).any():
            raise PosEncError("bias must not contain nan or +inf (−inf is allowed: it masks an entry)")
        try:
            target = np.broadcast_shapes(scores.shape, bias.shape)
        except ValueError as exc:
            raise PosEncError(f"bias of shape {bias.shape} does not broadcast to the scores {scores.shape}") from exc
        check_elements("attention scores", target)
        scores = scores + bias
    return scores


def check_finite_scores(scores: np.ndarray) -> None:
    """Refuse scores that overflowed float64 (huge q, k or scale) instead of returning inf or nan."""
    if not np.all(np.isfinite(scores)):
        raise PosEncError("the scores overflow float64: q, k or scale are too large")


def attention(
    q: object, k: object, v: object, *, bias: object = None, causal: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    r"""``(output, weights)``: weights = softmax(QKᵀ/√d + B, masked if ``causal``), output = weights · V."""
    causal = as_bool("causal", causal)
    scores = attention_scores(q, k, bias=bias)
    v = as_array("v", v, min_ndim=2)
    if v.shape[-2] != scores.shape[-1]:
        raise PosEncError(f"v must have one row per key ({scores.shape[-1]}), got shape {v.shape}")
    if causal:
        scores = np.where(causal_mask(scores.shape[-2], scores.shape[-1]), -np.inf, scores)
    weights = softmax(scores, axis=-1)
    try:
        lead = np.broadcast_shapes(weights.shape[:-2], v.shape[:-2])
    except ValueError as exc:
        raise PosEncError(
            f"the leading dimensions of the weights {weights.shape} and v {v.shape} do not broadcast"
        ) from exc
    check_elements("attention output", (*lead, weights.shape[-2], v.shape[-1]))
    return weights @ v, weights
