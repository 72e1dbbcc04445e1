r"""Scaled dot-product attention, with an optional additive bias and causal mask: the operations every encoding
plugs into.

.. math::
    \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d}} + B\right) V

(Vaswani et al. 2017, arXiv:1706.03762, §3.2.1). ``B`` is where relative schemes put position: Shaw's and T5's
learned scalars per offset, ALiBi's linear penalty. :func:`attention_weights` applies softmax to given logits and a
bias. Random stand-ins for what a trained model would hold: :func:`random_logits` for q·k/√d when a page shows a bias
at work, :func:`token_embeddings` and :func:`projection_weights` for a head's inputs and weights. Why attention needs
position at all is :mod:`.equivariance`.

Shapes: q (…, Lq, d), k (…, Lk, d), v (…, Lk, d_v); scores and weights (…, Lq, Lk). When Lq < Lk the queries
are the *last* Lq positions (a decoder extending a cache), which is where :func:`causal_mask` puts its diagonal.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .errors import (
    MAX_ELEMENTS,
    PosEncError,
    as_array,
    as_bool,
    as_float,
    as_int,
    as_query_key_lengths,
    check_elements,
    check_finite_scores,
)

__all__ = [
    "ScalingSpread",
    "attention",
    "attention_scores",
    "attention_weights",
    "causal_mask",
    "projection_weights",
    "random_logits",
    "scaling_spread",
    "softmax",
    "token_embeddings",
]


def softmax(x: object, axis: int = -1) -> np.ndarray:
    r"""Numerically stable :math:`e^{x_j - \max x} / \sum_k e^{x_k - \max x}` along ``axis``.

    −inf entries get weight 0 (that is how masks work); a slice that is entirely −inf has no distribution and
    is an error, not a row of NaN. NaN and +inf are errors.
    """
    x = as_array("x", x, min_ndim=1, finite=False)
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer) or not -x.ndim <= axis < x.ndim:
        raise PosEncError(f"axis must be an integer in [{-x.ndim}, {x.ndim - 1}], got {axis!r}")
    top = np.max(x, axis=axis, keepdims=True)
    # A slice's maximum is nan if it holds a nan and +inf if it holds a +inf: the maxima the softmax needs anyway check
    # every entry, without the passes over x that isnan and isposinf make (issue 46: ALiBi's largest page).
    if np.isnan(top).any() or np.isposinf(top).any():
        raise PosEncError("x must not contain nan or +inf (−inf is allowed: it masks an entry)")
    if np.isneginf(top).any():
        raise PosEncError("softmax over a slice that is entirely −inf (every key masked) is undefined")
    with np.errstate(over="ignore"):  # x − max may overflow to −inf (e.g. −1e308 − 1e308): weight 0, as it should be
        e = np.subtract(x, top)
    np.exp(e, out=e)  # in place: one array the size of x instead of three, the same numbers
    e /= np.sum(e, axis=axis, keepdims=True)
    return e


def causal_mask(query_length: int, key_length: int | None = None) -> np.ndarray:
    r"""Boolean (Lq, Lk) matrix, True where key j lies in the future of query i (j > i): those get −inf.

    Queries are the last Lq positions: query row r sits at i = Lk − Lq + r (more queries than keys is an error).
    """
    query_length, key_length = as_query_key_lengths(query_length, key_length)
    i = np.arange(query_length, dtype=np.int64) + (key_length - query_length)
    j = np.arange(key_length, dtype=np.int64)
    return j[None, :] - i[:, None] > 0


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


def attention_weights(logits: object, *, bias: object = None, causal: bool = False) -> np.ndarray:
    r""":math:`\operatorname{softmax}_j(\ell_{ij} + B_{ij})`, keys j > i masked when ``causal``; shape of the
    broadcast of ``logits`` (…, Lq, Lk) and ``bias`` (e.g. (H, Lq, Lk) against (Lq, Lk)).

    Queries are the last Lq positions (see :func:`causal_mask`). −inf in ``bias`` masks an entry.
    """
    logits = as_array("logits", logits, min_ndim=2)
    causal = as_bool("causal", causal)
    scores = logits
    if bias is not None:
        bias = as_array("bias", bias, min_ndim=2, finite=False)
        try:
            shape = np.broadcast_shapes(logits.shape, bias.shape)
        except ValueError as exc:
            raise PosEncError(f"bias of shape {bias.shape} does not broadcast to the logits {logits.shape}") from exc
        check_elements("attention_weights", shape)
        with np.errstate(over="ignore", invalid="ignore"):
            scores = logits + bias
        # The logits are finite, so a nan or +inf in the sum comes from the bias or from an overflow, and its maximum
        # shows it in one pass; which of the two is read only then.
        if not np.max(scores) < np.inf:
            if np.isnan(bias).any() or np.isposinf(bias).any():
                raise PosEncError("bias must not contain nan or +inf (−inf is allowed: it masks an entry)")
            raise PosEncError("logits + bias overflow float64")
    if causal:
        scores = np.where(causal_mask(scores.shape[-2], scores.shape[-1]), -np.inf, scores)
    return softmax(scores, axis=-1)


def random_logits(query_length: int, key_length: int | None = None, *, std: float = 1.0, seed: int = 0) -> np.ndarray:
    r"""A reproducible (Lq, Lk) matrix of i.i.d. :math:`\mathcal N(0, \text{std}^2)` logits: a stand-in for
    :math:`q_i \cdot k_j / \sqrt d` of random unit-variance q, k, on which a bias can be shown at work."""
    query_length = as_int("query_length", query_length, lo=1, hi=MAX_ELEMENTS)
    key_length = query_length if key_length is None else as_int("key_length", key_length, lo=1, hi=MAX_ELEMENTS)
    std = as_float("std", std, ge=0.0, le=1e6)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    check_elements("random_logits", (query_length, key_length))
    return std * np.random.default_rng([seed, 0x10617]).standard_normal((query_length, key_length))


def token_embeddings(tokens: Sequence[str], dim: int, *, seed: int = 0) -> np.ndarray:
    r"""(L, dim) standard-normal embeddings, one per token, equal for equal token text (a stand-in vocabulary)."""
    if isinstance(tokens, str) or not isinstance(tokens, Sequence) or not tokens:
        raise PosEncError(f"tokens must be a non-empty list of strings, got {tokens!r:.60}")
    if not all(isinstance(t, str) for t in tokens):
        raise PosEncError("tokens must all be strings")
    dim = as_int("dim", dim, lo=1, hi=65536)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    check_elements("token_embeddings", (len(tokens), dim))
    rows = [np.random.default_rng([seed, zlib.crc32(t.encode("utf-8"))]).standard_normal(dim) for t in tokens]
    return np.stack(rows)


def projection_weights(d_model: int, d_head: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Random ``(w_q, w_k, w_v)``, each (d_model, d_head) with entries N(0, 1/d_model): q and k keep unit scale."""
    d_model = as_int("d_model", d_model, lo=1, hi=65536)
    d_head = as_int("d_head", d_head, lo=1, hi=65536)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    check_elements("projection_weights", (3, d_model, d_head))
    w = np.random.default_rng([seed, 0x5EED]).standard_normal((3, d_model, d_head)) / math.sqrt(d_model)
    return w[0], w[1], w[2]


class ScalingSpread(NamedTuple):
    r"""Per head size d: the spread of q·k and the largest softmax weight, without and with the factor 1/√d."""

    dims: np.ndarray  # (n,) head sizes d
    spread: np.ndarray  # (n,) standard deviation of q·k over the draws (≈ √d)
    spread_scaled: np.ndarray  # (n,) of q·k/√d (≈ 1)
    top_weight: np.ndarray  # (n,) mean over the draws of the largest softmax weight of q·k over the keys
    top_weight_scaled: np.ndarray  # (n,) the same for q·k/√d


def scaling_spread(dims: Sequence[int], *, keys: int = 16, draws: int = 256, seed: int = 0) -> ScalingSpread:
    r"""Why attention divides by :math:`\sqrt{d_k}`: with q and k of independent standard-normal components,
    :math:`q\cdot k = \sum_{i<d} q_i k_i` has mean 0 and variance d, so its spread grows as :math:`\sqrt d` and the
    softmax over ``keys`` such scores puts nearly all its weight on one key (it saturates, and its gradients vanish).
    Dividing by :math:`\sqrt{d}` — the scaling *factor* is :math:`1/\sqrt{d_k}` — keeps the variance 1 at every d.

    Each of ``draws`` draws takes one query and ``keys`` keys per d (the same generator for every d). Paper: Vaswani et
    al. 2017, arXiv:1706.03762, §3.2.1 and its footnote 4 (the variance of q·k is :math:`d_k`).
    """
    dims = as_array("dims", dims, ndim=1, integer=True)  # refuses None, a bare number, an empty list and fractions
    if dims.size > 64 or dims.min() < 1 or dims.max() > 65536:
        raise PosEncError(
            f"dims must be 1 … 64 head sizes in 1 … 65536, got {dims.size} in {dims.min()} … {dims.max()}"
        )
    keys = as_int("keys", keys, lo=2, hi=4096)
    draws = as_int("draws", draws, lo=2, hi=4096)
    check_elements("scaling_spread(draws × keys × max(dims))", (draws, keys, int(dims.max())))
    rng = np.random.default_rng(as_int("seed", seed, lo=0, hi=2**32 - 1))
    spread, spread_scaled, top, top_scaled = [], [], [], []
    for d in dims:
        q = rng.standard_normal((draws, 1, int(d)))  # (draws, 1, d)
        k = rng.standard_normal((draws, keys, int(d)))  # (draws, keys, d)
        # q·k = Σ_i q_i k_i
        scores = np.einsum("bqd,bkd->bk", q, k)  # (draws, keys)
        scaled = scores / math.sqrt(d)  # q·k / √d
        spread.append(float(scores.std()))
        spread_scaled.append(float(scaled.std()))
        top.append(float(softmax(scores).max(axis=-1).mean()))
        top_scaled.append(float(softmax(scaled).max(axis=-1).mean()))
    return ScalingSpread(dims.astype(np.float64), *(np.asarray(a) for a in (spread, spread_scaled, top, top_scaled)))
