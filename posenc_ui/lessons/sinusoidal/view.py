r"""Page 3 — sinusoidal position encoding (Vaswani et al. 2017, §3.5).

The table, chosen dimensions as waves, the dot product against the offset, the shift matrix
:math:`M_k` with :math:`PE_{p+k} = M_k PE_p` (checked on every p of the table), the two ways of writing the
frequencies, and the two column layouts in use.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    linear_shift_residual,
    pair_shift_gap,
    pair_shift_matrix,
    position_readout,
    residual_stream_probe,
    sinusoidal,
    sinusoidal_inv_freq,
    sinusoidal_shift_matrix,
    sinusoidal_shift_residual,
    sinusoidal_similarity,
    sinusoidal_slow_pairs,
)

from ...figures import heatmap
from ...i18n import t
from ...lesson import Check, Explain, PageEntry, Values, View, uses
from ...memo import memo
from ...state import ChoiceParam, IntListParam, IntParam
from . import faq
from . import figures as figs

BASES = (100.0, 1000.0, 10000.0, 100000.0, 1000000.0)
#: How many (sin, cos) pairs of M_k are drawn: enough to see the 2 × 2 rotation blocks.
SHOWN_PAIRS = 4  # 8 × 8 cells: their two-decimal labels stay apart on a phone
#: The two layout heatmaps sit side by side at half width: a quarter of the cells is plenty.
LAYOUT_CELLS = heatmap.MAX_CELLS // 4

PARAMS = (
    IntParam("length", 128, lo=4, hi=4096, step=2),  # reaches the 50 × 128 table that articles draw
    IntParam("dim", 128, lo=4, hi=1024, step=4),
    ChoiceParam("base", 10000.0, options=BASES, widget="select_slider"),
    IntListParam("dims", (0, 20, 21, 40), lo=0, hi=1023, hi_from="dim", hi_offset=-1, max_items=6),
    IntParam("offset", 5, lo=1, hi=4095, hi_from="length", hi_offset=-1),
)

#: A pair is "slow" when it turns less than this over the whole sequence (radians): sin stays within 0.1 of 0.
STRIPE_ANGLE = 0.1
#: Where the erratum's shift is tried (any position shows it; 3 is the article's kind of small example).
ERRATA_POSITION = 3


@memo
def _table(length: int, dim: int, base: float, layout: str = "interleaved") -> np.ndarray:
    return sinusoidal(length, dim, base=base, layout=layout)  # (L, d)


def _table_sample(
    length: int, dim: int, base: float, layout: str, *, max_cells: int = heatmap.MAX_CELLS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The table at screen resolution: (sampled table, row positions, column indices), float32."""
    row_stride, col_stride = heatmap.strides(length, dim, max_cells=max_cells)
    rows, cols = np.arange(0, length, row_stride), heatmap.pair_columns(dim, col_stride, layout)
    return _table(length, dim, base, layout)[np.ix_(rows, cols)].astype(np.float32), rows, cols


@uses("length", "dim", "base")
def heatmap_figure(v: Values, lang: str) -> go.Figure:
    z, rows, cols = _table_sample(v["length"], v["dim"], v["base"], "interleaved")
    title = t("sinusoidal.fig_heatmap", lang, length=v["length"], dim=v["dim"], base=f"{v['base']:g}")
    return figs.encoding_heatmap(z, rows, cols, title=title, lang=lang)


@uses("length", "dim", "base", "dims")
def waves_figure(v: Values, lang: str) -> go.Figure:
    table = _table(v["length"], v["dim"], v["base"])[:1024]  # waves beyond 1024 positions are a blur
    return figs.waves(table, v["dims"], lang=lang)


@uses("length", "dim", "base")
def similarity_figure(v: Values, lang: str) -> go.Figure:
    offsets = np.arange(v["length"], dtype=np.float64)  # k ≥ 0: the curve is even in k (said in the text)
    return figs.similarity(offsets, sinusoidal_similarity(offsets, v["dim"], base=v["base"]), v["dim"], lang=lang)


@uses("offset", "dim", "base")
def shift_figure(v: Values, lang: str) -> go.Figure:
    shown = 2 * min(SHOWN_PAIRS, v["dim"] // 2)
    matrix = sinusoidal_shift_matrix(v["offset"], v["dim"], base=v["base"])[:shown, :shown]
    return figs.shift_matrix(matrix, v["offset"], v["dim"], lang=lang)


@uses("dim", "base")
def exponent_figure(v: Values, lang: str) -> go.Figure:
    exp_form = sinusoidal_inv_freq(v["dim"], base=v["base"])
    pow_form = sinusoidal_inv_freq(v["dim"], base=v["base"], form="power")
    return figs.exponent_forms(exp_form, pow_form, lang=lang)


def _layout_figure(v: Values, lang: str, layout: str) -> go.Figure:
    length = min(v["length"], 256)  # the column order is what differs; a few hundred rows show it
    z, rows, cols = _table_sample(length, v["dim"], v["base"], layout, max_cells=LAYOUT_CELLS)
    return figs.encoding_heatmap(z, rows, cols, title=t(f"sinusoidal.{layout}", lang), lang=lang, height=360)


@uses("length", "dim", "base")
def interleaved_figure(v: Values, lang: str) -> go.Figure:
    return _layout_figure(v, lang, "interleaved")


@uses("length", "dim", "base")
def concat_figure(v: Values, lang: str) -> go.Figure:
    return _layout_figure(v, lang, "concat")


@uses("length", "dim", "base", "offset")
def check_shift(v: Values) -> Check:
    shift = sinusoidal_shift_matrix(v["offset"], v["dim"], base=v["base"])
    residual = sinusoidal_shift_residual(_table(v["length"], v["dim"], v["base"]), shift, v["offset"])
    return Check("sinusoidal.check_shift", residual, fmt={"offset": v["offset"], "count": v["length"] - v["offset"]})


@uses("length", "dim", "base")
def check_stripes(v: Values) -> Check:
    r"""The slow pairs' columns are flat: sin within sin(0.1) of 0 and cos within 1 − cos(0.1) of 1 (tolerance 1); with
    no slow pair, the slowest pair turns more than 0.1 rad over the sequence (ratio 0.1 / its angle, tolerance 1)."""
    slow = sinusoidal_slow_pairs(v["length"], v["dim"], base=v["base"], max_angle=STRIPE_ANGLE)
    if slow.count == 0:  # no flat stripe at this base and length: say so, with the slowest pair's whole turn
        angle = (v["length"] - 1) * float(sinusoidal_inv_freq(v["dim"], base=v["base"])[-1])
        fmt = {"length": v["length"], "base": f"{v['base']:g}", "last": v["dim"] // 2 - 1, "angle": f"{angle:.2f}"}
        return Check("sinusoidal.check_stripes_none", STRIPE_ANGLE / angle, tolerance=1.0, fmt=fmt)
    residual = max(slow.sin_max / math.sin(STRIPE_ANGLE), slow.cos_gap / (1.0 - math.cos(STRIPE_ANGLE)))
    fmt = {
        "count": slow.count,
        "pairs": v["dim"] // 2,
        "first": slow.first,
        "length": v["length"],
        "sin": f"{slow.sin_max:.3f}",
        "cos": f"{slow.cos_gap:.4f}",
    }
    return Check("sinusoidal.check_stripes", residual, tolerance=1.0, fmt=fmt)


@uses("dim", "base", "offset")
def check_errata_shift(v: Values) -> Check:
    r"""The article's pair shift: right with θ, in (sin, cos) order; without θ, or on (cos, sin), it misses."""
    i = v["dim"] // 4  # a middle pair, where θ_i is far from 1 (pair 0 has θ = 1, hiding a missing θ)
    theta = float(sinusoidal_inv_freq(v["dim"], base=v["base"])[i])
    k, p = v["offset"], ERRATA_POSITION
    right = pair_shift_gap(pair_shift_matrix(k, theta), p, k, theta)
    no_theta = pair_shift_gap(pair_shift_matrix(k, 1.0), p, k, theta)
    flipped = pair_shift_gap(pair_shift_matrix(k, theta), p, k, theta, order="cos_sin")
    fmt = {"i": i, "k": k, "p": p, "no_theta": f"{no_theta:.2f}", "flipped": f"{flipped:.2f}"}
    return Check("sinusoidal.check_errata_shift", right, fmt=fmt)


@uses("dim", "base")
def check_exponent(v: Values) -> Check:
    exp_form = sinusoidal_inv_freq(v["dim"], base=v["base"])
    pow_form = sinusoidal_inv_freq(v["dim"], base=v["base"], form="power")
    return Check("sinusoidal.check_exponent", float(np.max(np.abs(exp_form - pow_form) / pow_form)), tolerance=1e-13)


VIEW = View(
    page_id="sinusoidal",
    params=PARAMS,
    figures={
        "heatmap": heatmap_figure,
        "waves": waves_figure,
        "similarity": similarity_figure,
        "shift": shift_figure,
        "exponent": exponent_figure,
        "interleaved": interleaved_figure,
        "concat": concat_figure,
        **faq.FIGURES,
    },
    sweeps={
        "heatmap": "base",
        "waves": "base",
        "similarity": "base",
        "shift": "offset",
        "exponent": "base",
        "interleaved": "base",
        "concat": "base",
    },
    static=faq.STATIC,
    checks={
        "shift": check_shift,
        "exponent": check_exponent,
        "stripes": check_stripes,
        "errata_shift": check_errata_shift,
        **faq.CHECKS,
    },
    explain=Explain(
        latex=(
            r"\begin{aligned} PE_{(p,\,2i)} &= \sin(p\,\omega_i) \\ PE_{(p,\,2i+1)} &= \cos(p\,\omega_i) \end{aligned}",
            r"\omega_i = \text{base}^{-2i/d} = e^{-\frac{2i}{d}\ln \text{base}}",
            r"PE_{p+k} = M_k\,PE_p",
            r"M_k^{(i)} = \begin{pmatrix}\cos k\omega_i & \sin k\omega_i\\"
            r"-\sin k\omega_i & \cos k\omega_i\end{pmatrix}",
        ),
        sources=(
            sinusoidal,
            sinusoidal_inv_freq,
            sinusoidal_shift_matrix,
            sinusoidal_slow_pairs,
            pair_shift_matrix,
            linear_shift_residual,
            residual_stream_probe,
            position_readout,
        ),
        paper="Vaswani et al. 2017, *Attention Is All You Need*, arXiv:1706.03762, §3.5",
    ),
)

PAGE = PageEntry("pages/3_Sinusoidal.py", VIEW, preview="heatmap")
