r"""Page 5 — relative positions: Shaw et al.'s clipped offsets, the scalar bias :math:`R_{j-i}`, T5's buckets, and
why additive absolute codes are not relative.

Every relative scheme looks up something by the offset :math:`j - i` only, so its bias matrix is Toeplitz; the page
measures that (:func:`posenc_core.toeplitz_deviation` = 0 exactly) and measures the opposite for the
position-only term :math:`p_m W_Q W_K^\top p_n^\top` of additive sinusoids (§2.2 of
the article 「从零学习大模型--旋转位置编码」).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    diagonal_spread,
    learned_table,
    position_cross_scores,
    projection_weights,
    relative_positions,
    shaw_attention,
    shaw_relative_bias,
    shaw_relative_index,
    sinusoidal,
    t5_bucket_matrix,
    t5_max_exact,
    t5_relative_bucket,
    toeplitz_deviation,
)

from ...figures import heatmap
from ...lesson import Check, Explain, PageEntry, Values, View, uses
from ...memo import memo
from ...state import ChoiceParam, IntParam
from . import figures as figs

DIRECTIONS = ("bidirectional", "causal")
PROJECTIONS = ("random", "identity")
#: The bucket chart runs a quarter past max_distance, so the saturation is visible.
T5_OVERSHOOT = 1.25

PARAMS = (
    IntParam("key_length", 12, lo=2, hi=64),  # ≥ 2: the L_q slider needs a range
    IntParam("query_length", 12, lo=1, hi=64, hi_from="key_length"),
    IntParam("max_relative", 3, lo=0, hi=32),
    IntParam("num_buckets", 32, lo=8, hi=64, step=8),
    IntParam("max_distance", 128, lo=48, hi=2048, step=16),  # ≥ 33 > max_exact for every num_buckets, causal too
    ChoiceParam("direction", "bidirectional", options=DIRECTIONS),
    IntParam("t5_length", 192, lo=16, hi=512, step=16),
    ChoiceParam("projection", "random", options=PROJECTIONS),
    IntParam("cross_length", 48, lo=8, hi=256, step=8),
    IntParam("d_model", 32, lo=4, hi=256, step=4),
    IntParam("seed", 0, lo=0, hi=20),
)


def _positions(query_length: int, key_length: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Absolute query and key positions: queries are the last Lq keys (the core's convention)."""
    return np.arange(key_length - query_length, key_length), np.arange(key_length)


@memo
def _shaw_weights(max_relative: int) -> np.ndarray:
    r"""One freshly initialised scalar :math:`R_r` per clipped offset r = −k … k (seed 0, N(0, 0.02²))."""
    return learned_table(2 * max_relative + 1, 1, seed=0)[:, 0]


@memo
def _shaw_bias(query_length: int, key_length: int, max_relative: int) -> np.ndarray:
    return shaw_relative_bias(_shaw_weights(max_relative), query_length, key_length, max_relative=max_relative)


@uses("query_length", "key_length", "max_relative")
def shaw_index_figure(v: Values, lang: str) -> go.Figure:
    index = shaw_relative_index(v["query_length"], v["key_length"], max_relative=v["max_relative"])
    return figs.shaw_index(index, *_positions(v["query_length"], v["key_length"]), v["max_relative"], lang=lang)


@uses("max_relative")
def bias_table_figure(v: Values, lang: str) -> go.Figure:
    return figs.bias_table(_shaw_weights(v["max_relative"]), v["max_relative"], lang=lang)


@uses("query_length", "key_length", "max_relative")
def bias_matrix_figure(v: Values, lang: str) -> go.Figure:
    bias = _shaw_bias(v["query_length"], v["key_length"], v["max_relative"])
    return figs.bias_matrix(bias, *_positions(v["query_length"], v["key_length"]), lang=lang)


@uses("num_buckets", "max_distance")
def t5_buckets_figure(v: Values, lang: str) -> go.Figure:
    reach = int(T5_OVERSHOOT * v["max_distance"])
    relative = np.arange(-reach, reach + 1)
    kw = {"num_buckets": v["num_buckets"], "max_distance": v["max_distance"]}
    return figs.t5_buckets(
        relative,
        t5_relative_bucket(relative, bidirectional=True, **kw),
        t5_relative_bucket(relative, bidirectional=False, **kw),
        max_exact_bidirectional=t5_max_exact(bidirectional=True, num_buckets=v["num_buckets"]),
        max_exact_causal=t5_max_exact(bidirectional=False, num_buckets=v["num_buckets"]),
        max_distance=v["max_distance"],
        lang=lang,
    )


@memo
def _t5_matrix(length: int, direction: str, num_buckets: int, max_distance: int) -> np.ndarray:
    return t5_bucket_matrix(
        length, bidirectional=direction == "bidirectional", num_buckets=num_buckets, max_distance=max_distance
    )


@uses("t5_length", "direction", "num_buckets", "max_distance")
def t5_matrix_figure(v: Values, lang: str) -> go.Figure:
    matrix = _t5_matrix(v["t5_length"], v["direction"], v["num_buckets"], v["max_distance"])
    stride, _ = heatmap.strides(v["t5_length"], v["t5_length"])
    shown = np.arange(0, v["t5_length"], stride)
    return figs.bucket_matrix(matrix[np.ix_(shown, shown)], shown, mode=v["direction"], lang=lang)


@memo
def _cross(projection: str, length: int, d_model: int, seed: int) -> np.ndarray:
    r""":math:`p_m W_Q W_K^\top p_n^\top` for sinusoids, with random projections or :math:`W_Q = W_K = I`."""
    if projection == "identity":
        w_q = w_k = np.eye(d_model)
    else:
        w_q, w_k, _ = projection_weights(d_model, d_model, seed=seed)
    return position_cross_scores(sinusoidal(length, d_model), w_q, w_k)


@uses("projection", "cross_length", "d_model", "seed")
def cross_figure(v: Values, lang: str) -> go.Figure:
    scores = _cross(v["projection"], v["cross_length"], v["d_model"], v["seed"])
    return figs.cross_scores(scores, projection=v["projection"], lang=lang)


@uses("projection", "cross_length", "d_model", "seed", "max_relative")
def spread_figure(v: Values, lang: str) -> go.Figure:
    length = v["cross_length"]
    additive = diagonal_spread(_cross(v["projection"], length, v["d_model"], v["seed"]))
    relative = diagonal_spread(_shaw_bias(length, length, v["max_relative"]))
    return figs.diagonal_spreads(np.arange(-(length - 1), length), additive, relative, lang=lang)


#: Width and seed of the toy head in Shaw's check (content and offsets random).
SHAW_DIM, SHAW_SEED = 16, 0


@memo
def _shaw_attention(length: int, max_relative: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng([seed, length, max_relative])
    x = rng.standard_normal((length, SHAW_DIM))
    w_q, w_k, w_v = rng.standard_normal((3, SHAW_DIM, SHAW_DIM)) / np.sqrt(SHAW_DIM)
    a_k, a_v = rng.standard_normal((2, 2 * max_relative + 1, SHAW_DIM))
    split = shaw_attention(x, w_q, w_k, w_v, a_k, a_v, max_relative=max_relative)
    pairwise = shaw_attention(x, w_q, w_k, w_v, a_k, a_v, max_relative=max_relative, method="pairwise")
    return float(np.max(np.abs(split.output - pairwise.output))), split.value_share


@uses("key_length", "max_relative")
def check_shaw(v: Values) -> Check:
    r"""Shaw's efficient two-product form (§3.3) equals eqs. (3)–(5) pair by pair; the value side's share is shown.

    The random tokens come from a seed of their own: the page's seed belongs to the cross-attention section below.
    """
    gap, share = _shaw_attention(v["key_length"], v["max_relative"], SHAW_SEED)
    fmt = {"length": v["key_length"], "k": v["max_relative"], "share": f"{100 * share:.0f}"}
    return Check("relative.check_shaw", gap, tolerance=1e-9, fmt=fmt)


@uses("query_length", "key_length", "max_relative")
def check_toeplitz(v: Values) -> Check:
    residual = toeplitz_deviation(_shaw_bias(v["query_length"], v["key_length"], v["max_relative"]))
    sizes = {"lq": v["query_length"], "lk": v["key_length"]}
    return Check("relative.check_toeplitz", residual, tolerance=0.0, fmt=sizes)


@uses("t5_length", "direction", "num_buckets", "max_distance")
def check_t5(v: Values) -> Check:
    residual = toeplitz_deviation(_t5_matrix(v["t5_length"], v["direction"], v["num_buckets"], v["max_distance"]))
    return Check("relative.check_t5", residual, tolerance=0.0, fmt={"length": v["t5_length"]})


@uses("projection", "cross_length", "d_model", "seed")
def check_cross(v: Values) -> Check:
    residual = toeplitz_deviation(_cross(v["projection"], v["cross_length"], v["d_model"], v["seed"]))
    if v["projection"] == "identity":  # sinusoids alone: p_m · p_n = Σ cos((n − m) ω_i), Toeplitz up to rounding
        return Check("relative.check_cross_identity", residual, tolerance=1e-9)
    return Check("relative.check_cross", residual, expect_zero=False, tolerance=1e-9)


VIEW = View(
    page_id="relative",
    params=PARAMS,
    figures={
        "shaw_index": shaw_index_figure,
        "bias_table": bias_table_figure,
        "bias_matrix": bias_matrix_figure,
        "t5_buckets": t5_buckets_figure,
        "t5_matrix": t5_matrix_figure,
        "cross": cross_figure,
        "spread": spread_figure,
    },
    sweeps={
        "shaw_index": "max_relative",
        "bias_table": "max_relative",
        "bias_matrix": "max_relative",
        "t5_buckets": "num_buckets",
        "t5_matrix": "max_distance",
        "cross": "cross_length",
        "spread": "cross_length",  # Shaw's spread is 0 at every k: the additive code's spread moves with L
    },
    checks={"toeplitz": check_toeplitz, "shaw": check_shaw, "t5": check_t5, "cross": check_cross},
    explain=Explain(
        latex=(
            r"\text{index}(i, j) = \operatorname{clip}(j - i,\,-k,\,k) + k",
            r"\operatorname{softmax}\!\Big(\frac{QK^\top}{\sqrt{d}} + A_{\text{rel}}\Big)V",
            r"A_{\text{rel}}(i, j) = R_{\operatorname{clip}(j-i,\,-k,\,k)}",
            r"e_{ij} = \frac{x_i W_Q\,(x_j W_K + a^K_{ij})^\top}{\sqrt{d_k}}",
            r"z_i = \sum_j \alpha_{ij}\,(x_j W_V + a^V_{ij})",
            r"\begin{aligned} b(n) &= n, \quad n < h/2 \\ b(n) &= \min\!\Big(h - 1,\ \tfrac h2 + \Big\lfloor"
            r"\frac{\ln(2n/h)}{\ln(2D/h)}\,\tfrac h2 \Big\rfloor\Big) \end{aligned}",
            r"\begin{aligned} q_m k_n^\top &= x_m W_Q W_K^\top x_n^\top + x_m W_Q W_K^\top p_n^\top \\"
            r" &+ p_m W_Q W_K^\top x_n^\top + \underbrace{p_m W_Q W_K^\top p_n^\top}_{S_{mn}} \end{aligned}",
        ),
        sources=(
            shaw_relative_index,
            shaw_relative_bias,
            shaw_attention,
            t5_relative_bucket,
            relative_positions,
            position_cross_scores,
            diagonal_spread,
        ),
        paper="Shaw, Uszkoreit & Vaswani 2018, arXiv:1803.02155, §3; Raffel et al. 2020 (T5), arXiv:1910.10683, §2.1",
    ),
)

PAGE = PageEntry("pages/5_Relative.py", VIEW, preview="t5_buckets")
