r"""Figures of page 4: a learned table against sinusoids past max_length, and the one-hot identity."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ..i18n import t
from .heatmap import heatmap_trace
from .style import DIVERGING, ONE_HOT, ORANGE, PALETTE, SIN_COLOUR, WALL_COLOUR, axis, figure


def extrapolation(
    learned: np.ndarray,
    sines: np.ndarray,
    max_length: int,
    position: int,
    dims: Sequence[int],
    *,
    lang: str,
) -> go.Figure:
    r"""Columns ``dims`` of a learned table (top; no rows past ``max_length``) and of sinusoids (bottom; no end).

    A wall marks max_length across both panels and a dotted line the position the reader asked for. The two
    panels are laid out by hand: ``make_subplots`` and ``add_vline`` cost ~30 ms, on every slider move.
    """
    traces = [
        {
            "type": "scatter",
            "x": np.arange(table.shape[0]),
            "y": table[:, n],
            "mode": "lines",
            "line": {"color": PALETTE[n % len(PALETTE)], "width": 1.2},
            "name": f"{axis('dim', lang)} {d}",
            "legendgroup": str(d),
            "showlegend": panel == "",
            "xaxis": f"x{panel}",
            "yaxis": f"y{panel}",
        }
        for panel, table in (("", learned), ("2", sines))
        for n, d in enumerate(dims)
    ]
    line = {"type": "line", "xref": "x2", "yref": "paper", "y0": 0, "y1": 1}
    panel_title = {"xref": "paper", "yref": "paper", "x": 0.5, "showarrow": False, "yanchor": "bottom"}
    return figure(
        traces,
        title=t("learned.fig_extrapolation", lang, position=position),
        height=480,
        xaxis={"anchor": "y", "matches": "x2", "showticklabels": False},
        yaxis={"domain": [0.58, 1.0], "title": {"text": axis("value", lang)}},
        xaxis2={"anchor": "y2", "title": {"text": axis("position", lang)}},
        yaxis2={"domain": [0.0, 0.42], "title": {"text": axis("value", lang)}},
        shapes=[
            {**line, "x0": max_length - 0.5, "x1": max_length - 0.5, "line": {"color": WALL_COLOUR, "width": 3}},
            {**line, "x0": position, "x1": position, "line": {"color": "#262730", "dash": "dot", "width": 1.5}},
        ],
        annotations=[
            {**panel_title, "y": 1.0, "text": t("learned.panel_learned", lang)},
            {**panel_title, "y": 0.42, "text": t("learned.panel_sines", lang)},
            {
                "x": max_length,
                "xref": "x2",
                "y": 0.94,
                "yref": "paper",
                "xanchor": "left",
                "showarrow": False,
                "text": t("learned.wall_label", lang, max_length=max_length),
                "font": {"color": WALL_COLOUR},
            },
        ],
        legend={"orientation": "h", "y": -0.18, "yanchor": "top", "x": 0, "xanchor": "left"},
        margin={"t": 72},
    )


def one_hot_weights(one_hot: np.ndarray, weight: np.ndarray, sizes: Sequence[int], *, lang: str) -> go.Figure:
    r"""The concatenated one-hot [1_t ‖ 1_p ‖ 1_s] (left strip) beside the stacked tables W = [E_tok; E_pos; E_seg].

    The rows the one-hot selects are the rows that get added.
    """
    names = [t(f"learned.table_{part}", lang) for part in ("tok", "pos", "seg")]
    labels = np.asarray([f"{name} {i}" for name, size in zip(names, sizes, strict=True) for i in range(size)])
    strip = heatmap_trace(
        one_hot[:, None], x=np.array(["1"]), y=labels, colorscale=ONE_HOT, zmin=0, zmax=1, showscale=False,
        hover="%{y}: %{z:.0f}", xgap=2, ygap=2, text=one_hot[:, None].astype(int), texttemplate="%{text}",
    )  # fmt: skip
    limit = float(np.max(np.abs(weight))) or 1.0
    table = heatmap_trace(
        weight, x=np.arange(weight.shape[1]), y=labels, colorscale=DIVERGING, zmid=0.0, zmin=-limit, zmax=limit,
        hover=f"%{{y}}, {axis('dim', lang)} %{{x}}: %{{z:.4f}}", xgap=1, ygap=2, xaxis="x2",
    )  # fmt: skip
    return figure(
        [strip, table],
        title=t("learned.fig_onehot", lang),
        height=380,
        xaxis={"domain": [0.0, 0.1], "type": "category", "showticklabels": False},
        xaxis2={"domain": [0.14, 1.0], "anchor": "y", "title": {"text": axis("dim", lang)}, "dtick": 1},
        yaxis={"autorange": "reversed"},
    )


def embedding_outputs(summed: np.ndarray, linear: np.ndarray, *, lang: str) -> go.Figure:
    r"""The summed lookups (bars) and the linear layer's output (diamonds), dimension by dimension."""
    dims = np.arange(summed.shape[0])
    bars = {"type": "bar", "x": dims, "y": summed, "name": t("learned.summed", lang), "marker": {"color": SIN_COLOUR}}
    diamonds = {
        "type": "scatter", "x": dims, "y": linear, "mode": "markers", "name": t("learned.linear", lang),
        "marker": {"color": ORANGE, "size": 10, "symbol": "diamond", "line": {"color": "white", "width": 1}},
    }  # fmt: skip
    return figure(
        [bars, diamonds],
        title=t("learned.outputs", lang),
        x=axis("dim", lang),
        y=axis("value", lang),
        height=380,
        legend={"orientation": "h", "y": -0.28, "yanchor": "top", "x": 0, "xanchor": "left"},
    )
