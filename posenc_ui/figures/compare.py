r"""Figures of page 10 (compare): every encoding's position-only score matrix as small multiples, and the lab's
committed runs past the training length, one panel per task with the spread over seeds. Pure builders: arrays in,
``go.Figure`` out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ..i18n import t
from .heatmap import heatmap_trace
from .style import GREY, SEQUENTIAL, WALL_COLOUR, axis, figure

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


@dataclass(frozen=True)
class ExtrapolationPanel:
    r"""One task: its title, its band labels (inside L, 1–2·L, …) and, per encoding, one spread per band (anything
    with ``mean``, ``low`` and ``high``, e.g. :class:`posenc_core.lab_task.Spread`); the verdict's tolerance."""

    title: str
    bands: tuple[str, ...]
    spreads: Mapping[str, Sequence]
    tolerance: float


PANEL_HEIGHT, PANEL_GAP = 190, 78  # px: a panel, and the room under it for its ticks and the next panel's title
TOP, BOTTOM = 110, 120  # px: the two-line title and the first panel's; the legend (up to three rows on a phone)
SPREAD_X = 0.5  # the encodings of one band share this much of the x axis, so their error bars do not overlap


def extrapolation(
    panels: Sequence[ExtrapolationPanel],
    labels: Mapping[str, str],
    colours: Mapping[str, str],
    *,
    train_length: int,
    seeds: int,
    lang: str,
) -> go.Figure:
    r"""Panels stacked one under the other (a phone is narrow, not short): per band of positions, each encoding's
    mean over seeds with an error bar from its lowest to its highest seed, the tolerance dotted, L dashed."""
    n = len(panels)
    plot = n * PANEL_HEIGHT + (n - 1) * PANEL_GAP
    height = plot + TOP + BOTTOM
    traces, annotations, shapes, layout = [], [], [], {}
    encodings = list(labels)
    for k, panel in enumerate(panels):
        suffix = "" if k == 0 else str(k + 1)
        top = 1.0 - k * (PANEL_HEIGHT + PANEL_GAP) / plot
        bottom = top - PANEL_HEIGHT / plot
        for j, encoding in enumerate(encodings):
            spreads = panel.spreads[encoding]
            offset = (j - (len(encodings) - 1) / 2) * SPREAD_X / max(len(encodings) - 1, 1)
            means = [float(s.mean) for s in spreads]
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "x": [i + offset for i in range(len(spreads))],
                    "y": means,
                    "customdata": [
                        [band, float(s.low), float(s.high)] for band, s in zip(panel.bands, spreads, strict=True)
                    ],
                    "error_y": {
                        "type": "data",
                        "symmetric": False,
                        "array": [float(s.high) - m for s, m in zip(spreads, means, strict=True)],
                        "arrayminus": [m - float(s.low) for s, m in zip(spreads, means, strict=True)],
                        "color": colours[encoding],
                        "thickness": 1.2,
                        "width": 2,
                    },
                    "name": labels[encoding],
                    "legendgroup": encoding,
                    "showlegend": k == 0,
                    "line": {"color": colours[encoding], "width": 1.2},
                    "marker": {"color": colours[encoding], "size": 6},
                    "hovertemplate": "%{customdata[0]}: %{y:.3f}<br>[%{customdata[1]:.3f}, %{customdata[2]:.3f}]"
                    "<extra>%{fullData.name}</extra>",
                    "xaxis": f"x{suffix}",
                    "yaxis": f"y{suffix}",
                }
            )
        layout[f"xaxis{suffix}"] = {
            "domain": [0.0, 1.0],
            "anchor": f"y{suffix}",
            "tickmode": "array",
            "tickvals": list(range(len(panel.bands))),
            "ticktext": list(panel.bands),
            "range": [-0.5, len(panel.bands) - 0.5],
            "tickfont": {"size": 11},
            "showgrid": False,
            "zeroline": False,
        }
        layout[f"yaxis{suffix}"] = {
            "domain": [max(0.0, bottom), min(1.0, top)],
            "anchor": f"x{suffix}",
            "zeroline": True,
            "tickfont": {"size": 11},
        }
        annotations.append(
            {
                "xref": "paper",
                "yref": "paper",
                "x": 0.0,
                "y": top,
                "xanchor": "left",
                "yanchor": "bottom",
                "text": panel.title,
                "showarrow": False,
                "font": {"size": 12},
            }
        )
        shapes.append(  # the training length: between the "inside L" band and the first band past it
            {
                "type": "line",
                "xref": f"x{suffix}",
                "yref": "paper",
                "x0": 0.5,
                "x1": 0.5,
                "y0": max(0.0, bottom),
                "y1": min(1.0, top),
                "line": {"color": WALL_COLOUR, "dash": "dash", "width": 1},
            }
        )
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "yref": f"y{suffix}",
                "x0": 0,
                "x1": 1,
                "y0": panel.tolerance,
                "y1": panel.tolerance,
                "line": {"color": GREY, "dash": "dot", "width": 1},
            }
        )
        annotations.append(
            {
                "xref": "paper",
                "yref": f"y{suffix}",
                "x": 1.0,
                "y": panel.tolerance,
                "xanchor": "right",
                "yanchor": "bottom",
                "text": f"τ = {panel.tolerance:g}",
                "showarrow": False,
                "font": {"size": 10, "color": GREY},
            }
        )
    return figure(
        traces,
        title=t("compare.fig_extrapolation", lang, length=train_length, seeds=seeds),
        height=height,
        annotations=annotations,
        shapes=shapes,
        legend={"orientation": "h", "x": 0.0, "xanchor": "left", "y": -46 / plot, "yanchor": "top"},
        margin={"l": 48, "r": 16, "t": TOP, "b": BOTTOM},
        hovermode="closest",
        **layout,
    )
