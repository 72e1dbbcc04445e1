r"""Figures of page 2: integer positions, [0, 1] positions for several lengths, binary bits and neighbour jumps."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from ...figures.heatmap import heatmap_trace
from ...figures.style import BITS, BLUE, GREY, GUIDE, SIN_COLOUR, VERMILION, axis, figure
from ...i18n import t

#: Values are written on markers and cells only while they stay legible.
MAX_LABELLED = 32


def integer_positions(positions: np.ndarray, *, lang: str) -> go.Figure:
    r"""p against the token index, over the band [−1, 1] where sin/cos (and typical embedding entries) live."""
    line = {
        "type": "scatter",
        "x": np.arange(positions.shape[0]),
        "y": positions,
        "mode": "lines+markers" if positions.shape[0] <= MAX_LABELLED else "lines",
        "line": {"color": VERMILION},
        "name": t("first.integer_trace", lang),
        "hovertemplate": "p = %{y:.0f}<extra></extra>",
    }
    band_key = {  # a legend entry for the shaded band
        "type": "scatter",
        "x": [None],
        "y": [None],
        "mode": "markers",
        "name": t("first.band_trace", lang),
        "marker": {"color": BLUE, "opacity": 0.3, "size": 12, "symbol": "square"},
    }
    band = {
        "type": "rect",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "y0": -1,
        "y1": 1,
        "fillcolor": BLUE,
        "opacity": 0.15,
        "line": {"width": 0},
        "layer": "below",
    }
    return figure(
        [line, band_key],
        title=t("first.fig_integer", lang),
        x=axis("token", lang),
        y=axis("value", lang),
        shapes=[band],
    )


def normalized_positions(rows: Mapping[int, np.ndarray], *, lang: str) -> go.Figure:
    r"""One number line per length L: the positions p/(L − 1), labelled while there are few of them."""
    traces = []
    for length, values in rows.items():
        label, few = f"L = {length}", values.shape[0] <= 8
        traces.append(
            {
                "type": "scatter",
                "x": values,
                "y": [label] * values.shape[0],
                "mode": "lines+markers+text" if few else "lines+markers",
                "text": [f"{v:.3f}".rstrip("0").rstrip(".") if v else "0" for v in values] if few else None,
                "textposition": "top center",
                "marker": {"size": 10 if few else 6, "color": SIN_COLOUR if few else GREY},
                "line": {"color": GUIDE},
                "showlegend": False,
                "hovertemplate": "p/(L−1) = %{x:.4f}<extra>" + label + "</extra>",
            }
        )
    return figure(
        traces,
        title=t("first.fig_normalized", lang),
        x=axis("normalized", lang),
        y=axis("length", lang),
        height=300,
        xaxis={"range": [-0.06, 1.06]},
        yaxis={"type": "category", "categoryorder": "array", "categoryarray": [f"L = {n}" for n in rows]},
    )


def binary_bits(bits: np.ndarray, *, lang: str) -> go.Figure:
    r"""The (L, bits) 0/1 table, least-significant bit first: each column an odometer wheel."""
    length, width = bits.shape
    labelled = {"text": bits.astype(int), "texttemplate": "%{text}", "textfont": {"size": 11}}
    trace = heatmap_trace(
        bits,
        x=np.arange(width),
        y=np.arange(length),
        colorscale=BITS,
        zmin=0,
        zmax=1,
        showscale=False,
        hover=f"{axis('position', lang)} %{{y}}<br>{axis('bit', lang)} %{{x}}: %{{z:.0f}}",
        xgap=1,
        ygap=1 if length <= 64 else 0,
        **(labelled if length <= MAX_LABELLED else {}),
    )
    return figure(
        [trace],
        title=t("first.fig_binary", lang),
        x=axis("bit", lang),
        y=axis("position", lang),
        height=420,
        xaxis={"dtick": 1},
        yaxis={"autorange": "reversed"},
    )


def neighbour_jumps(binary: np.ndarray, sines: np.ndarray, *, lang: str) -> go.Figure:
    r"""‖PE(p+1) − PE(p)‖ against p: jumps for binary codes, one constant for sinusoids of the same width."""
    p = np.arange(binary.shape[0])
    hover = "p → p+1: %{y:.3f}<extra></extra>"
    bars = {
        "type": "bar",
        "x": p,
        "y": binary,
        "name": t("first.binary_trace", lang),
        "marker": {"color": VERMILION},
        "hovertemplate": hover,
    }
    line = {
        "type": "scatter",
        "x": p,
        "y": sines,
        "mode": "lines",
        "name": t("first.sines_trace", lang),
        "line": {"color": SIN_COLOUR, "width": 3},
        "hovertemplate": hover,
    }
    return figure([bars, line], title=t("first.fig_jumps", lang), x=axis("position", lang), y=axis("distance", lang))
