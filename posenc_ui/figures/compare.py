r"""Figures of page 10 (compare): every encoding's position-only score matrix as small multiples, and the lab's
extrapolation result per encoding. Pure builders: arrays in, ``go.Figure`` out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ..i18n import t
from .heatmap import heatmap_trace
from .style import GREY, SEQUENTIAL, axis, figure

COLUMNS = 3


def score_matrices(panels: Sequence[tuple[str, np.ndarray, np.ndarray]], *, length: int, lang: str) -> go.Figure:
    r"""Small multiples: one (sampled) score matrix per panel = (title, z, sampled positions), each on its own
    colour range (the pattern, not the scale, is compared), queries down, keys across."""
    rows = -(-len(panels) // COLUMNS)
    gap_x, gap_y = 0.05, 0.1
    width, height = (1.0 - gap_x * (COLUMNS - 1)) / COLUMNS, (1.0 - gap_y * (rows - 1)) / rows
    traces, annotations, layout = [], [], {}
    hover = f"{axis('query', lang)} %{{y}}<br>{axis('key', lang)} %{{x}}<br>%{{z:.3f}}"
    for n, (title, z, positions) in enumerate(panels):
        row, col = divmod(n, COLUMNS)
        suffix = "" if n == 0 else str(n + 1)
        x0, y1 = col * (width + gap_x), 1.0 - row * (height + gap_y)
        finite = z[np.isfinite(z)]
        traces.append(
            heatmap_trace(
                z,
                x=positions,
                y=positions,
                colorscale=SEQUENTIAL,
                zmin=float(finite.min()),
                zmax=float(finite.max()),
                hover=hover,
                showscale=False,
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
            )
        )
        layout[f"xaxis{suffix}"] = {
            "domain": [max(0.0, x0), min(1.0, x0 + width)],
            "anchor": f"y{suffix}",
            "showticklabels": False,
            "ticks": "",
        }
        layout[f"yaxis{suffix}"] = {
            "domain": [max(0.0, y1 - height), min(1.0, y1)],
            "anchor": f"x{suffix}",
            "autorange": "reversed",
            "showticklabels": False,
            "ticks": "",
        }
        annotations.append(
            {
                "xref": "paper",
                "yref": "paper",
                "x": x0 + width / 2,
                "y": y1,
                "yanchor": "bottom",
                "xanchor": "center",
                "text": title,
                "showarrow": False,
                "font": {"size": 12},
            }
        )
    return figure(
        traces,
        title=t("compare.fig_matrices", lang, length=length),
        annotations=annotations,
        height=300 * rows + 80,
        margin={"l": 16, "r": 16, "t": 72, "b": 16},
        **layout,
    )


def extrapolation(
    excess: Mapping[str, tuple[float, float]],
    labels: Mapping[str, str],
    colours: Mapping[str, str],
    *,
    tolerance: float,
    train_length: int,
    lang: str,
) -> go.Figure:
    r"""Mean loss above the optimum inside and beyond the training length, one pair of bars per encoding."""
    names = list(excess)
    x = [labels[name] for name in names]
    traces = [
        {
            "type": "bar",
            "x": x,
            "y": [excess[n][0] for n in names],
            "name": t("compare.inside", lang),
            "marker": {"color": [colours[n] for n in names], "opacity": 0.5, "pattern": {"shape": "/"}},
            "hovertemplate": "%{x}<br>%{y:.3f}<extra>%{fullData.name}</extra>",
        },
        {
            "type": "bar",
            "x": x,
            "y": [excess[n][1] for n in names],
            "name": t("compare.beyond", lang),
            "marker": {"color": [colours[n] for n in names]},
            "hovertemplate": "%{x}<br>%{y:.3f}<extra>%{fullData.name}</extra>",
        },
    ]
    line = {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "y0": tolerance,
        "y1": tolerance,
        "line": {"color": GREY, "dash": "dot", "width": 1},
    }
    return figure(
        traces,
        title=t("compare.fig_extrapolation", lang, length=train_length),
        x=axis("encoding", lang),
        y=t("compare.axis_excess", lang),
        barmode="group",
        shapes=[line],
    )
