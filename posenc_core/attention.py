r"""Scaled dot-product attention, with an optional additive bias and causal mask — and why it needs position.

.. math::
    \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d}} + B\right) V

(Vaswani et al. 2017, arXiv:1706.03762, §3.2.1). ``B`` is where relative schemes put position: Shaw's and T5's
learned scalars per offset, ALiBi's linear penalty. :func:`attention_weights` applies softmax to given logits and a
bias (:func:`random_logits` stands in for q·k/√d when a page shows a bias at work).

Without any bias — and without position added to the inputs — attention is permutation-equivariant: shuffling the
tokens shuffles the output rows the same way and changes nothing else (Vaswani et al. 2017, §3.5: "since our model
contains no recurrence and no convolution …"). Page 1 shows it with :func:`self_attention` over
:func:`token_embeddings` and :func:`projection_weights`; :func:`permutation_equivariance_residual` measures it for
each of :data:`ENCODINGS`.

Shapes: q (…, Lq, d), k (…, Lk, d), v (…, Lk, d_v); scores and weights (…, Lq, Lk). When Lq < Lk the queries
are the *last* Lq positions (a decoder extending a cache), which is where the causal mask puts its diagonal.
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .alibi import alibi_bias
from .errors import (
    MAX_ELEMENTS,
    PosEncError,
    as_array,
    as_bool,
    as_choice,
    as_float,
    as_int,
    check_elements,
    check_finite_scores,
)
from .learned import learned_table
from .relative import causal_mask
from .rope import apply_rope, rope_inv_freq
from .sinusoidal import sinusoidal

__all__ = [
    "ENCODINGS",
    "PROBE_READS",
    "PositionReadout",
    "attention",
    "attention_scores",
    "attention_weights",
    "permutation_equivariance_residual",
    "position_readout",
    "projection_weights",
    "random_logits",
    "residual_stream_probe",
    "self_attention",
    "softmax",
    "token_embeddings",
]

#: What :func:`residual_stream_probe` reads back from the stream: the position code, the word vectors, or both from
#: the same fits (one least-squares solve per block for both targets).
PROBE_READS = ("position", "word", "both")
#: The word vectors' variance per coordinate: ½, the power of a sinusoid's entries.
_WORD_VARIANCE = 0.5

#: How :func:`self_attention` can inject position.
ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi")


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
        e = np.subtract(x, top)
    np.exp(e, out=e)  # in place: one array the size of x instead of three, the same numbers
    e /= np.sum(e, axis=axis, keepdims=True)
    return e


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

    Queries are the last Lq positions (see :func:`~posenc_core.causal_mask`). −inf in ``bias`` masks an entry.
    """
    logits = as_array("logits", logits, min_ndim=2)
    causal = as_bool("causal", causal)
    scores = logits
    if bias is not None:
        bias = as_array("bias", bias, min_ndim=2, finite=False)
        if np.isnan(bias).any() or np.isposinf(bias).any():
            raise PosEncError("bias must not contain nan or +inf (−inf is allowed: it masks an entry)")
        try:
            shape = np.broadcast_shapes(logits.shape, bias.shape)
        except ValueError as exc:
            raise PosEncError(f"bias of shape {bias.shape} does not broadcast to the logits {logits.shape}") from exc
        check_elements("attention_weights", shape)
        with np.errstate(over="ignore"):
            scores = logits + bias
        if np.isposinf(scores).any():
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


# --- why attention needs position ----------------------------------------------------------------------------------


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


def self_attention(
    x: object,
    *,
    w_q: object,
    w_k: object,
    w_v: object,
    encoding: str = "none",
    base: float = 10000.0,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    r"""One attention head over the rows of x (L, d_model), with position injected as ``encoding`` says.

    "sinusoidal" and "learned" add a table to x before the projections (Vaswani 2017; BERT); "rope" rotates the
    projected q and k (RoFormer); "alibi" adds the symmetric bias :math:`-\tfrac12|i-j|` (ALiBi's first slope of 8
    heads, the non-causal form); "none" uses the embeddings alone. Returns ``(output (L, d_v), weights (L, L))``.
    """
    x = as_array("x", x, ndim=2)
    encoding = as_choice("encoding", encoding, ENCODINGS)
    length, d_model = x.shape
    w_q, w_k, w_v = (as_array(name, w, ndim=2) for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)))
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        if w.shape[0] != d_model:
            raise PosEncError(f"{name} must have {d_model} rows (the width of x), got shape {w.shape}")
    if w_q.shape[1] != w_k.shape[1]:
        raise PosEncError(f"w_q and w_k must have the same number of columns, got {w_q.shape} and {w_k.shape}")
    if encoding == "sinusoidal":
        x = x + sinusoidal(length, d_model, base=base)
    elif encoding == "learned":
        x = x + learned_table(length, d_model, seed=seed)
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    bias = None
    if encoding == "rope":
        if q.shape[1] % 2:
            raise PosEncError(f"rope needs an even query/key width, got {q.shape[1]}")
        positions, inv_freq = np.arange(length, dtype=np.float64), rope_inv_freq(q.shape[1], base=base)
        q, k = apply_rope(q, positions, inv_freq), apply_rope(k, positions, inv_freq)
    elif encoding == "alibi":
        bias = alibi_bias(8, length, causal=False, heads=[0])[0]
    return attention(q, k, v, bias=bias)


def permutation_equivariance_residual(
    x: object,
    permutation: object,
    *,
    w_q: object,
    w_k: object,
    w_v: object,
    encoding: str = "none",
    base: float = 10000.0,
    seed: int = 0,
) -> float:
    r""":math:`\max |f(Px) - P f(x)|` for the attention layer f of :func:`self_attention`.

    Zero up to rounding (~1e-16) when ``encoding="none"``: shuffling the tokens only shuffles the outputs, so the
    layer cannot tell "公司收购了竞争对手" from "竞争对手收购了公司". Any real encoding makes it large.
    """
    x = as_array("x", x, ndim=2)
    perm = as_array("permutation", permutation, ndim=1, integer=True)
    if perm.shape[0] != x.shape[0] or not np.array_equal(np.sort(perm), np.arange(x.shape[0])):
        raise PosEncError(f"permutation must be a rearrangement of 0 … {x.shape[0] - 1}")
    weights = {"w_q": w_q, "w_k": w_k, "w_v": w_v, "encoding": encoding, "base": base, "seed": seed}
    out, _ = self_attention(x, **weights)
    out_shuffled, _ = self_attention(x[perm], **weights)
    return float(np.max(np.abs(out_shuffled - out[perm])))


def residual_stream_probe(
    table: object, *, layers: int, residual: bool = True, seed: int = 0, read: str = "position"
) -> np.ndarray:
    r"""How well a linear probe reads the position code (or, ``read="word"``, the word vectors) back after each of
    ``layers`` random blocks: R², shape (layers + 1,), entry 0 at the input; ``read="both"`` gives (2, layers + 1),
    position then word, from the same stream.

    Each position holds a random word vector (N(0, ½) per coordinate, the power of a sinusoid's entries) plus its row
    of ``table`` (L, d). A block is a pre-LayerNorm ReLU MLP of width 4d with random weights (variance-preserving);
    ``residual=True`` adds its output to the stream, :math:`h \leftarrow h + F(h)`, ``False`` replaces the stream,
    :math:`h \leftarrow F(h)`. After each block a least-squares probe :math:`h \mapsto` table is fitted on the even
    positions and scored (R²) on the odd ones. With the residual stream the position code stays linearly readable
    through depth; without it, it is not, within a few blocks — and neither is the word (``read="word"``, the same
    draws): random, untrained blocks scramble everything, so that loss is not specific to position.

    The question is Kazemnejad's ("Transformer Architecture: The Positional Encoding", 2019, FAQ): how does position
    reach later layers? The residual connection is He et al. 2016 (arXiv:1512.03385).
    """
    table = as_array("table", table, ndim=2)
    layers = as_int("layers", layers, lo=0, hi=64)
    residual = as_bool("residual", residual)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    read = as_choice("read", read, PROBE_READS)
    length, dim = table.shape
    if length < 2 * (dim + 2):
        raise PosEncError(f"table needs at least 2·(d + 2) = {2 * (dim + 2)} rows for a held-out probe, got {length}")
    check_elements("residual_stream_probe", (length, 4 * dim))
    rng = np.random.default_rng(seed)
    words = rng.standard_normal((length, dim)) * math.sqrt(_WORD_VARIANCE)  # (L, d)
    h = words + table  # (L, d): word + position
    targets = {"position": (table,), "word": (words,), "both": (table, words)}[read]
    scores = [_probe_r2s(h, targets)]
    for _ in range(layers):
        w1 = rng.standard_normal((dim, 4 * dim)) / math.sqrt(dim)  # (d, 4d)
        w2 = rng.standard_normal((4 * dim, dim)) / math.sqrt(2 * dim)  # (4d, d): ReLU halves the variance
        z = (h - h.mean(axis=1, keepdims=True)) / (h.std(axis=1, keepdims=True) + 1e-12)  # LayerNorm, no gain
        block = np.maximum(z @ w1, 0.0) @ w2
        h = h + block if residual else block
        scores.append(_probe_r2s(h, targets))
    curves = np.asarray(scores).T  # (targets, layers + 1)
    return curves if read == "both" else curves[0]


class PositionReadout(NamedTuple):
    r"""R² of three ways to read the position code from word + position at the input."""

    linear: float  # the least-squares probe, fitted on even positions, scored on odd ones
    ceiling: float  # the best any linear map can do: Σλ²/(λ + σ²) / Σλ
    curve: float  # the nearest row of the table: a decoder that knows the curve


def position_readout(table: object, *, seed: int = 0) -> PositionReadout:
    r"""How much of the position code three readers recover from :math:`h = w + p` at the input: a linear probe, the
    ceiling of every linear map, and the nearest row of the table, as R².

    Same draws as :func:`residual_stream_probe` (word vectors :math:`w \sim N(0, \sigma^2 I)`, σ² = ½, the power of
    a sinusoid's entries). The best linear map is
    :math:`\hat p = \mu + \Sigma_p(\Sigma_p + \sigma^2 I)^{-1}(h - \mu)` (linear least squares with p uniform over
    the rows, w independent of p), whose R² is :math:`\sum_k \lambda_k^2/(\lambda_k + \sigma^2) / \sum_k \lambda_k`
    over the eigenvalues of the table's covariance: every direction the code spans carries word noise of the same
    power, and no linear map can remove it. The nearest row, :math:`\arg\min_m \lVert h - p_m\rVert`, is the
    maximum-likelihood position under isotropic Gaussian words; it is not linear, and it knows the table.
    Kazemnejad 2019 (FAQ) asks where position lives once added; this answers "not apart from the word, for a linear
    reader".
    """
    table = as_array("table", table, ndim=2).astype(np.float64, copy=False)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    length, dim = table.shape
    if length < 2 * (dim + 2):
        raise PosEncError(f"table needs at least 2·(d + 2) = {2 * (dim + 2)} rows for a held-out probe, got {length}")
    check_elements("position_readout", (length, length))
    words = np.random.default_rng(seed).standard_normal((length, dim)) * math.sqrt(_WORD_VARIANCE)
    h = words + table  # (L, d): the same stream as residual_stream_probe's input
    eigen = np.clip(np.linalg.eigvalsh(np.cov(table.T, bias=True)), 0.0, None)  # (d,): the code's spread
    total = float(eigen.sum())
    if total == 0.0:
        raise PosEncError("table must vary across positions (every row is the same)")
    ceiling = float(np.sum(eigen**2 / (eigen + _WORD_VARIANCE))) / total
    # ‖h − p_m‖² = ‖h‖² − 2 h·p_m + ‖p_m‖²: the nearest row maximises 2 h·p_m − ‖p_m‖²
    nearest = np.argmax(2.0 * h @ table.T - np.sum(table**2, axis=1)[None, :], axis=1)  # (L,)
    spread = float(np.sum((table - table.mean(axis=0)) ** 2))
    curve = 1.0 - float(np.sum((table[nearest] - table) ** 2)) / spread
    return PositionReadout(_probe_r2(h, table), ceiling, curve)


def _probe_r2s(h: np.ndarray, targets: tuple[np.ndarray, ...]) -> list[float]:
    r""":func:`_probe_r2` for several targets at once: one least-squares solve, one R² per target."""
    stacked = np.concatenate(targets, axis=1)
    features = np.c_[h, np.ones(h.shape[0])]
    weights, *_ = np.linalg.lstsq(features[0::2], stacked[0::2], rcond=None)
    error = features[1::2] @ weights - stacked[1::2]
    spread = stacked[1::2] - stacked[1::2].mean(axis=0)
    bounds = np.cumsum([0] + [t.shape[1] for t in targets])
    return [
        float(1.0 - np.sum(error[:, a:b] ** 2) / np.sum(spread[:, a:b] ** 2)) for a, b in itertools.pairwise(bounds)
    ]


def _probe_r2(h: np.ndarray, target: np.ndarray) -> float:
    r"""R² on the odd rows of a least-squares map (with intercept) from h to target fitted on the even rows."""
    features = np.c_[h, np.ones(h.shape[0])]
    weights, *_ = np.linalg.lstsq(features[0::2], target[0::2], rcond=None)
    error = features[1::2] @ weights - target[1::2]
    spread = target[1::2] - target[1::2].mean(axis=0)
    return float(1.0 - np.sum(error**2) / np.sum(spread**2))
