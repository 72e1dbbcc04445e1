r"""Figures of page 4: a learned table and its wall, a table the lab trained, and the one-hot identity."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ...figures.heatmap import heatmap_trace
from ...figures.style import (
    DIVERGING,
    GREY,
    ONE_HOT,
    ORANGE,
    PALETTE,
    SELECTED,
    SIN_COLOUR,
    WALL_COLOUR,
    WHITE,
    axis,
    figure,
    legend_below,
    translucent,
)
from ...i18n import t


def _column_traces(learned: np.ndarray, sines: np.ndarray, dims: Sequence[int], *, lang: str) -> list[dict]:
    r"""Columns ``dims`` of both tables, the learned one on the top panel (axes x, y), sinusoids below (x2, y2)."""
    return [
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
    line = {"type": "line", "xref": "x2", "yref": "paper", "y0": 0, "y1": 1}
    panel_title = {"xref": "paper", "yref": "paper", "x": 0.5, "showarrow": False, "yanchor": "bottom"}
    wall_label = {
        "x": max_length,
        "xref": "x2",
        "y": 0.94,
        "yref": "paper",
        "xanchor": "left",
        "xshift": 6,
        "showarrow": False,
        "text": t("learned.wall_label", lang, max_length=max_length),
        "font": {"color": WALL_COLOUR},
    }
    return figure(
        _column_traces(learned, sines, dims, lang=lang),
        title=t("learned.fig_extrapolation", lang, position=position),
        height=480,
        xaxis={"anchor": "y", "matches": "x2", "showticklabels": False},
        yaxis={"domain": [0.58, 1.0], "title": {"text": axis("value", lang)}},
        xaxis2={"anchor": "y2", "title": {"text": axis("position", lang)}},
        yaxis2={"domain": [0.0, 0.42], "title": {"text": axis("value", lang)}},
        shapes=[
            {**line, "x0": max_length - 0.5, "x1": max_length - 0.5, "line": {"color": WALL_COLOUR, "width": 3}},
            {**line, "x0": position, "x1": position, "line": {"color": SELECTED, "dash": "dot", "width": 1.5}},
        ],
        annotations=[
            {**panel_title, "y": 1.0, "text": t("learned.panel_learned", lang)},
            {**panel_title, "y": 0.42, "text": t("learned.panel_sines", lang)},
            wall_label,
        ],
        legend=legend_below(),
        margin={"t": 72},
    )


#: Rows a model trained, and rows it never touched, in every figure of the trained-table section.
TRAINED_COLOUR, UNTOUCHED_COLOUR = ORANGE, GREY
_LABEL_BOX = {"bgcolor": translucent(WHITE, 0.85), "showarrow": False, "font": {"color": WALL_COLOUR}}


def _row_wall(trained: int, xref: str = "x") -> dict:
    r"""A vertical line between the last trained row and the first untouched one (on axis ``xref``)."""
    return {
        "type": "line",
        "xref": xref,
        "yref": "paper",
        "x0": trained - 0.5,
        "x1": trained - 0.5,
        "y0": 0,
        "y1": 1,
        "line": {"color": WALL_COLOUR, "width": 2},
    }


def _by_group(x: np.ndarray, y: np.ndarray, trained: int, *, lang: str, legend: bool = True, **extra: object) -> list:
    r"""Two line-and-dot traces: points x < trained (trained rows) and the rest (rows training never touched)."""
    groups = (("trained", TRAINED_COLOUR, x < trained), ("untouched", UNTOUCHED_COLOUR, x >= trained))
    return [
        {
            "type": "scatter",
            "x": x[mask],
            "y": y[mask],
            "mode": "lines+markers",
            "legendgroup": group,
            "name": t(f"learned.group_{group}", lang),
            "line": {"color": colour, "width": 1},
            "marker": {"color": colour, "size": 4},
            "showlegend": legend,
            **extra,
        }
        for group, colour, mask in groups
        if np.any(mask)
    ]


def trained_table(
    z: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    trained: int,
    *,
    limit: float,
    title: str,
    lang: str,
) -> go.Figure:
    r"""A (sampled) trained table, positions down, with a line under its last trained row, ``trained − 1``.

    Colours run over ±``limit``; ``rows`` / ``cols`` are the true position and dimension of each sampled cell.
    """
    hover = f"{axis('position', lang)} %{{y}}<br>{axis('dim', lang)} %{{x}}<br>%{{z:.3f}}"
    trace = heatmap_trace(z, x=cols, y=rows, colorscale=DIVERGING, zmid=0.0, zmin=-limit, zmax=limit, hover=hover)
    edge = trained - 0.5
    label = {**_LABEL_BOX, "xref": "paper", "x": 1.0, "xanchor": "right", "yref": "y", "y": edge}
    return figure(
        [trace],
        title=title,
        x=axis("dim", lang),
        y=axis("position", lang),
        height=440,
        xaxis={"nticks": 8},
        yaxis={"autorange": "reversed"},
        shapes=[
            {
                "type": "line",
                "xref": "paper",
                "yref": "y",
                "x0": 0,
                "x1": 1,
                "y0": edge,
                "y1": edge,
                "line": {"color": WALL_COLOUR, "width": 2},
            }
        ],
        annotations=[
            {**label, "yanchor": "bottom", "text": t("learned.above_wall", lang, last=trained - 1)},
            {**label, "yanchor": "top", "text": t("learned.below_wall", lang, first=trained)},
        ],
    )


def trained_rows(
    cosine: np.ndarray,
    loss_rows: np.ndarray,
    loss: np.ndarray,
    trained: int,
    *,
    band: float,
    lang: str,
) -> go.Figure:
    r"""Top: :math:`\cos(E_p, E_{p+1})` for each pair of neighbouring rows, with the ±``band`` that random pairs fill.
    Bottom: the model's loss at the rows ``loss_rows``. A line under row ``trained − 1`` crosses both panels.

    A pair counts as trained when both its rows are. The panels are laid out by hand, as in :func:`extrapolation`.
    """
    pairs = np.arange(cosine.shape[0])
    hover_cos = "cos(E<sub>%{x}</sub>, E<sub>%{x}+1</sub>) = %{y:.3f}<extra></extra>"
    hover_loss = f"{axis('position', lang)} %{{x}}: %{{y:.2f}}<extra></extra>"
    traces = [
        *_by_group(pairs, cosine, trained - 1, lang=lang, hovertemplate=hover_cos),
        *_by_group(loss_rows, loss, trained, lang=lang, legend=False, xaxis="x2", yaxis="y2", hovertemplate=hover_loss),
    ]
    panel_title = {
        "xref": "paper",
        "yref": "paper",
        "x": 0.5,
        "showarrow": False,
        "yanchor": "bottom",
        "bgcolor": "white",
    }
    return figure(
        traces,
        title=t("learned.fig_trained_rows", lang),
        height=520,
        xaxis={"anchor": "y", "matches": "x2", "showticklabels": False},
        yaxis={"domain": [0.56, 1.0], "range": [-1.05, 1.05], "title": {"text": t("learned.axis_cosine", lang)}},
        xaxis2={"anchor": "y2", "title": {"text": axis("position", lang)}},
        yaxis2={"domain": [0.0, 0.42], "rangemode": "tozero", "title": {"text": t("learned.axis_loss", lang)}},
        shapes=[
            {
                "type": "rect",
                "xref": "paper",
                "yref": "y",
                "x0": 0,
                "x1": 1,
                "y0": -band,
                "y1": band,
                "fillcolor": translucent(GREY, 0.2),
                "line": {"width": 0},
                "layer": "below",
            },
            _row_wall(trained, "x2"),
        ],
        annotations=[
            {**panel_title, "y": 1.0, "text": t("learned.panel_cosine", lang)},
            {**panel_title, "y": 0.42, "text": t("learned.panel_loss", lang)},
            {
                "xref": "paper",
                "x": 1.0,
                "xanchor": "right",
                "yref": "y",
                "y": 0.75,
                "showarrow": False,
                "text": t("learned.band", lang, band=f"{band:.2f}"),
                "font": {"color": GREY},
            },  # clear of the dots
        ],
        legend=legend_below(),
        margin={"t": 72},
    )


def untouched_rows(distance: np.ndarray, trained: int, *, lang: str) -> go.Figure:
    r""":math:`\lVert A_p - B_p \rVert` row by row for two tables trained from one start: 0 from row ``trained`` on."""
    rows = np.arange(distance.shape[0])
    hover = f"{axis('position', lang)} %{{x}}: %{{y:.5f}}<extra></extra>"
    return figure(
        _by_group(rows, distance, trained, lang=lang, hovertemplate=hover),
        title=t("learned.fig_untouched", lang),
        x=axis("position", lang),
        y=t("learned.axis_twin", lang),
        height=380,
        yaxis={"rangemode": "tozero"},
        shapes=[_row_wall(trained)],
        annotations=[
            {
                **_LABEL_BOX,
                "xref": "x",
                "x": trained - 0.5,
                "xanchor": "left",
                "yref": "paper",
                "y": 0.5,
                "text": t("learned.untouched_label", lang, first=trained),
            }
        ],
        legend=legend_below(),
    )


def one_hot_weights(one_hot: np.ndarray, weight: np.ndarray, sizes: Sequence[int], *, lang: str) -> go.Figure:
    r"""The concatenated one-hot [1_t ‖ 1_p ‖ 1_s] (left strip) beside the stacked tables W = [E_tok; E_pos; E_seg].

    The rows the one-hot selects are the rows that get added.
    """
    names = [t(f"learned.table_{part}", lang) for part in ("tok", "pos", "seg")]
    labels = np.asarray([f"{name} {i}" for name, size in zip(names, sizes, strict=True) for i in range(size)])
    strip = heatmap_trace(
        one_hot[:, None],
        x=np.array(["1"]),
        y=labels,
        colorscale=ONE_HOT,
        zmin=0,
        zmax=1,
        showscale=False,
        hover="%{y}: %{z:.0f}",
        xgap=2,
        ygap=2,
        text=one_hot[:, None].astype(int),
        texttemplate="%{text}",
    )
    limit = float(np.max(np.abs(weight))) or 1.0
    table = heatmap_trace(
        weight,
        x=np.arange(weight.shape[1]),
        y=labels,
        colorscale=DIVERGING,
        zmid=0.0,
        zmin=-limit,
        zmax=limit,
        hover=f"%{{y}}, {axis('dim', lang)} %{{x}}: %{{z:.4f}}",
        xgap=1,
        ygap=2,
        xaxis="x2",
    )
    return figure(
        [strip, table],
        title=t("learned.fig_onehot", lang),
        y=axis("table_row", lang),
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
        "type": "scatter",
        "x": dims,
        "y": linear,
        "mode": "markers",
        "name": t("learned.linear", lang),
        "marker": {"color": ORANGE, "size": 10, "symbol": "diamond", "line": {"color": "white", "width": 1}},
    }
    return figure(
        [bars, diamonds],
        title=t("learned.outputs", lang),
        x=axis("dim", lang),
        y=axis("value", lang),
        height=380,
        legend=legend_below(),
    )
