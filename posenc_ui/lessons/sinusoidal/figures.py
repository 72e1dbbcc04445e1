r"""Figures of page 3 (and the encoding heatmap page 4 reuses): tables, waves, similarity, M_k, both exponent forms."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ...figures.heatmap import heatmap_trace
from ...figures.style import (
    COS_COLOUR,
    DIVERGING,
    PALETTE,
    SIN_COLOUR,
    VERMILION,
    axis,
    figure,
    legend_below,
    reference_line,
)
from ...i18n import t

#: Cells of a matrix are labelled with their value up to this size.
MAX_LABELLED = 16


def encoding_heatmap(
    z: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    *,
    title: str,
    lang: str,
    symmetric: float | None = 1.0,
    height: int = 440,
) -> go.Figure:
    r"""A (sampled) position-encoding table: positions down, dimensions across, blue < 0 < red.

    ``rows`` / ``cols`` are the true position and dimension of each sampled row and column; ``symmetric`` fixes
    the colour range to ±symmetric (None: ±max|z|).
    """
    limit = symmetric if symmetric is not None else float(np.max(np.abs(z))) or 1.0
    hover = f"{axis('position', lang)} %{{y}}<br>{axis('dim', lang)} %{{x}}<br>%{{z:.3f}}"
    trace = heatmap_trace(z, x=cols, y=rows, colorscale=DIVERGING, zmid=0.0, zmin=-limit, zmax=limit, hover=hover)
    return figure(
        [trace],
        title=title,
        x=axis("dim", lang),
        y=axis("position", lang),
        height=height,
        xaxis={"nticks": 8},
        yaxis={"autorange": "reversed"},
    )


def waves(table: np.ndarray, dims: Sequence[int], *, lang: str) -> go.Figure:
    r"""Columns ``dims`` of an interleaved table against position: even columns (sin) solid, odd (cos) dashed."""
    p = np.arange(table.shape[0])
    traces = [
        {
            "type": "scatter",
            "x": p,
            "y": table[:, d],
            "mode": "lines",
            "name": f"{axis('dim', lang)} {d} ({t('sinusoidal.sin' if d % 2 == 0 else 'sinusoidal.cos', lang)}, "
            f"i = {d // 2})",
            "line": {"color": PALETTE[n % len(PALETTE)], "dash": "solid" if d % 2 == 0 else "dash"},
        }
        for n, d in enumerate(dims)
    ]
    return figure(
        traces,
        title=t("sinusoidal.fig_waves", lang),
        x=axis("position", lang),
        y=axis("value", lang),
        height=420,
        yaxis={"range": [-1.1, 1.1]},
        legend=legend_below(),
    )


def similarity(offsets: np.ndarray, values: np.ndarray, dim: int, *, lang: str) -> go.Figure:
    r""":math:`PE_p \cdot PE_{p+k}` against k: d/2 at k = 0, the same for every p."""
    line = {
        "type": "scatter",
        "x": offsets,
        "y": values,
        "mode": "lines",
        "line": {"color": SIN_COLOUR},
        "name": "PE(p) · PE(p+k)",
        "hovertemplate": "k = %{x:.0f}: %{y:.3f}<extra></extra>",
    }
    return figure(
        [line],
        title=t("sinusoidal.fig_similarity", lang),
        x=axis("offset", lang),
        y=axis("dot", lang),
        **reference_line(dim / 2, "d/2"),
    )


def shift_matrix(matrix: np.ndarray, offset: int, dim: int, *, lang: str) -> go.Figure:
    r"""The top-left corner of :math:`M_k`: 2 × 2 rotation blocks on the diagonal, zeros elsewhere."""
    size = matrix.shape[0]
    idx = np.arange(size)
    labels = {}
    if size <= MAX_LABELLED:  # blank zeros, so the blocks stand out
        text = np.where(np.abs(matrix) > 0, np.char.mod("%.2f", matrix), "")
        labels = {"text": text, "texttemplate": "%{text}", "textfont": {"size": 10}}
    trace = heatmap_trace(
        matrix,
        x=idx,
        y=idx,
        colorscale=DIVERGING,
        zmid=0.0,
        zmin=-1.0,
        zmax=1.0,
        hover="row %{y}, col %{x}: %{z:.4f}",
        **labels,
    )
    return figure(
        [trace],
        title=t("sinusoidal.fig_shift", lang, offset=offset, shown=size, dim=dim),
        x=axis("dim", lang),
        y=axis("dim", lang),
        height=440,
        xaxis={"dtick": 2},
        yaxis={"autorange": "reversed", "dtick": 2},
    )


def exponent_forms(exp_form: np.ndarray, pow_form: np.ndarray, *, lang: str) -> go.Figure:
    r""":math:`\omega_i` written as a power and as an exponential (top, log scale), and their relative gap (bottom)."""
    i = np.arange(exp_form.shape[0])
    gap = np.abs(exp_form - pow_form) / pow_form
    traces = [
        {
            "type": "scatter",
            "x": i,
            "y": pow_form,
            "mode": "lines",
            "name": "base<sup>−2i/d</sup>",
            "line": {"color": SIN_COLOUR, "width": 4},
        },
        {
            "type": "scatter",
            "x": i,
            "y": exp_form,
            "mode": "lines",
            "name": "exp(−2i·ln(base)/d)",
            "line": {"color": COS_COLOUR, "dash": "dash", "width": 2},
        },
        {
            "type": "scatter",
            "x": i,
            "y": np.maximum(gap, 1e-18),
            "mode": "markers",
            "name": t("sinusoidal.gap", lang),
            "marker": {"color": VERMILION, "size": 4},
            "xaxis": "x2",
            "yaxis": "y2",
        },
    ]
    log = {"type": "log", "exponentformat": "power", "dtick": 1}  # decades only: no minor-tick clutter
    return figure(
        traces,
        title=t("sinusoidal.fig_exponent", lang),
        height=440,
        xaxis={"anchor": "y", "showticklabels": False, "matches": "x2"},
        yaxis={**log, "domain": [0.38, 1.0], "title": {"text": "ω<sub>i</sub>"}},
        xaxis2={"anchor": "y2", "title": {"text": axis("pair", lang)}},
        yaxis2={
            **log,
            "dtick": 2,
            "domain": [0.0, 0.28],
            "range": [-18, -13],  # a decade a tick crowds a phone
            "title": {"text": t("sinusoidal.gap", lang)},
        },
    )
