r"""Page 10 (position at length): position from the data. One seed draws a score matrix and token features; from
them the Forgetting Transformer's cumulative log forget gates, CoPE's counted positions and its bias, and
stick-breaking attention, beside ALiBi's bias and T5's buckets. Recipes only: :mod:`.view` puts them into the view.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    alibi_bias,
    alibi_slopes,
    attention_weights,
    causal_mask,
    cope_bias,
    cope_positions,
    forget_gate_bias,
    log_forget_gates,
    random_logits,
    relative_positions,
    stick_breaking_weights,
    t5_bucket_matrix,
    toeplitz_deviation,
)

from ...i18n import t
from ...lesson import Check, Values, uses
from ...memo import memo
from ...state import IntParam
from ..alibi import figures as grid

#: The ALiBi head drawn beside the gates: head 1 of 8, slope 1/4.
ALIBI_HEADS, ALIBI_HEAD = 8, 1
#: Width of the random token features that FoX's gate reads, and the gate's bias b (σ(2) ≈ 0.88: gates near 0.9).
FEATURES, FORGET_BIAS = 16, 2.0
#: T5's unidirectional buckets as in its decoder: 32 buckets, distances up to 128.
T5_BUCKETS, T5_DISTANCE = 32, 128

#: The panels that measure a distance (more = farther), drawn with the scale turned round: in every panel of the
#: biases figure yellow is what counts as near (a bias: the largest, least penalised; a distance: the smallest).
DISTANCES = frozenset({"t5", "positions"})

PARAMS = (
    IntParam("seed", 0, lo=0, hi=20),
    IntParam("gate_length", 24, lo=8, hi=64, step=4),
)


@memo
def gate_matrices(length: int, seed: int) -> dict[str, np.ndarray]:
    r"""Every matrix of the section for one draw: the scores z (a stand-in for q_i·k_j), the biases and the weights."""
    z = random_logits(length, seed=seed)  # (L, L)
    x = random_logits(length, FEATURES, seed=seed + 1)  # (L, features): the tokens the forget gates read
    w = random_logits(FEATURES, 1, std=0.25, seed=seed + 2)  # (features, 1 head)
    fox = forget_gate_bias(log_forget_gates(x, w, FORGET_BIAS))[0]  # (L, L), −inf above the diagonal
    positions = cope_positions(z)  # (L, L), ≤ i − j + 1
    position_logits = random_logits(length, length + 1, seed=seed + 3)  # z_i[p] = q_i·e[p], p = 0 … L
    cope = cope_bias(positions, position_logits)
    alibi = alibi_bias(ALIBI_HEADS, length, heads=[ALIBI_HEAD])[0]
    return {
        "z": z,
        "alibi": alibi,
        "t5": t5_bucket_matrix(length, bidirectional=False, num_buckets=T5_BUCKETS, max_distance=T5_DISTANCE),
        "fox": fox,
        "positions": positions,
        "cope": cope,
        "w_none": attention_weights(z, causal=True),
        "w_alibi": attention_weights(z, bias=alibi, causal=True),
        "w_fox": attention_weights(z, bias=fox, causal=True),
        "w_cope": attention_weights(z, bias=cope, causal=True),
        "w_stick": stick_breaking_weights(z),
    }


def _blank_future(z: np.ndarray) -> np.ndarray:
    r"""Keys after the query (and −inf) as NaN, which a heatmap leaves blank."""
    return np.where(causal_mask(z.shape[0]) | np.isneginf(z), np.nan, z)


@uses("gate_length", "seed")
def gate_bias_figure(v: Values, lang: str) -> go.Figure:
    m = gate_matrices(v["gate_length"], v["seed"])
    names = tuple(k for k in m if k != "z" and not k.startswith("w_"))  # the biases, in gate_matrices' order
    panels = [_blank_future(m[name].astype(np.float64)) for name in names]
    slope = alibi_slopes(ALIBI_HEADS)[ALIBI_HEAD]
    titles = [t(f"length.bias_{name}", lang, slope=f"{slope:g}") for name in names]
    return grid.panel_heatmaps(
        panels,
        titles,
        np.arange(v["gate_length"]),
        title=t("length.fig_gate_bias", lang, seed=v["seed"]),
        value_name=t("length.value_name", lang),
        lang=lang,
        shared_scale=False,
        gap=0.22,  # room for each panel's own colour bar
        reverse=[name in DISTANCES for name in names],  # yellow = near in every panel, dark = far
    )


@uses("gate_length", "seed")
def gate_weights_figure(v: Values, lang: str) -> go.Figure:
    m = gate_matrices(v["gate_length"], v["seed"])
    names = tuple(k.removeprefix("w_") for k in m if k.startswith("w_"))  # the weights, in gate_matrices' order
    panels = [_blank_future(m[f"w_{name}"]) for name in names]
    return grid.panel_heatmaps(
        panels,
        [t(f"length.weights_{name}", lang) for name in names],
        np.arange(v["gate_length"]),
        title=t("length.fig_gate_weights", lang, seed=v["seed"]),
        value_name=t("length.weight_name", lang),
        lang=lang,
        zmin=0.0,
        zmax=float(max(np.nanmax(p) for p in panels)),
    )


@uses("gate_length")
def check_fox_alibi(v: Values) -> Check:
    r"""FoX with every gate equal to e^(−m) gives ALiBi's bias −m(i − j) exactly: a data-dependent ALiBi."""
    length = v["gate_length"]
    slope = float(alibi_slopes(ALIBI_HEADS)[ALIBI_HEAD])
    fox = forget_gate_bias(np.full(length, -slope))
    alibi = alibi_bias(ALIBI_HEADS, length, heads=[ALIBI_HEAD])[0]
    below = ~causal_mask(length)
    residual = float(np.max(np.abs(fox[below] - alibi[below])))
    return Check("length.check_fox_alibi", residual, tolerance=1e-12, fmt={"slope": f"{slope:g}", "length": length})


@uses("gate_length", "seed")
def check_fox_not_toeplitz(v: Values) -> Check:
    r"""With the drawn gates neither FoX's bias nor CoPE's positions are Toeplitz (constant diagonals), unlike ALiBi's:
    the residual is the smaller of the two spreads."""
    m = gate_matrices(v["gate_length"], v["seed"])
    below = causal_mask(v["gate_length"])
    fox, cope = toeplitz_deviation(m["fox"]), toeplitz_deviation(np.where(below, -np.inf, m["positions"]))
    fmt = {"alibi": f"{toeplitz_deviation(m['alibi']):.2g}", "cope": f"{cope:.2f}"}
    return Check("length.check_fox_toeplitz", min(fox, cope), expect_zero=False, tolerance=1e-9, fmt=fmt)


@uses("gate_length", "seed")
def check_cope_count(v: Values) -> Check:
    r"""CoPE's position of key j from query i never exceeds the tokens from j to i, i − j + 1 (every gate < 1)."""
    m = gate_matrices(v["gate_length"], v["seed"])
    tokens = 1 - relative_positions(v["gate_length"])  # i − j + 1
    below = ~causal_mask(v["gate_length"])
    excess = float(np.max(m["positions"][below] - tokens[below]))
    last = v["gate_length"] - 1
    fmt = {"first": f"{m['positions'][last, 0]:.1f}", "tokens": last + 1}
    return Check("length.check_cope", max(0.0, excess), tolerance=0.0, fmt=fmt)


@uses("gate_length", "seed")
def check_stick_rows(v: Values) -> Check:
    r"""Stick-breaking's rows sum to at most 1: what no key took stays unspent (no renormalisation)."""
    sums = gate_matrices(v["gate_length"], v["seed"])["w_stick"].sum(-1)[1:]  # row 0 has no earlier key
    fmt = {"low": f"{sums.min():.3f}", "high": f"{sums.max():.3f}"}
    # a row sums ≤ 63 weights, each exact to a few ulps: 1e-13 is above the rounding of the sum, far below any excess
    return Check("length.check_stick", max(0.0, float(sums.max()) - 1.0), tolerance=1e-13, fmt=fmt)


@uses("gate_length")
def check_stick_recency(v: Values) -> Check:
    r"""With every score equal, stick-breaking's weight depends on the distance alone (a Toeplitz matrix)."""
    weights = stick_breaking_weights(np.zeros((v["gate_length"], v["gate_length"])))
    kept = weights > 0  # keys before the query; the diagonal and the future are −inf, as a masked bias
    below = np.where(kept, np.log(np.where(kept, weights, 1.0)), -np.inf)
    return Check("length.check_stick_recency", toeplitz_deviation(below), tolerance=1e-12, fmt={})


FIGURES = {"gate_bias": gate_bias_figure, "gate_weights": gate_weights_figure}
SWEEPS = {"gate_bias": "seed", "gate_weights": "seed"}
CHECKS = {
    "fox_alibi": check_fox_alibi,
    "fox_toeplitz": check_fox_not_toeplitz,
    "cope": check_cope_count,
    "stick": check_stick_rows,
    "stick_recency": check_stick_recency,
}
SOURCES = (forget_gate_bias, cope_positions, cope_bias, stick_breaking_weights)
