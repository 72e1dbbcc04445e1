r"""Figures of page 13 (compare): every encoding's position-only score matrix as small multiples, and the lab's
committed runs past the training length, one panel per task with the spread over seeds. Pure builders: arrays in,
``go.Figure`` out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ...figures.heatmap import heatmap_trace
from ...figures.style import GREY, SEQUENTIAL, TITLE_UNITS, WALL_COLOUR, axis, figure, legend_below, wrap_title
from ...i18n import t

COLUMNS = 3


def _matrix_axes(suffix: str, left: float, top: float, width: float, height: float) -> dict[str, dict]:
    r"""The x and y axes of one small multiple, its top-left corner at (``left``, ``top``) in paper units."""
    return {
        f"xaxis{suffix}": {
            "domain": [max(0.0, left), min(1.0, left + width)],
            "anchor": f"y{suffix}",
            "showticklabels": False,
            "ticks": "",
        },
        f"yaxis{suffix}": {
            "domain": [max(0.0, top - height), min(1.0, top)],
            "anchor": f"x{suffix}",
            "autorange": "reversed",
            "showticklabels": False,
            "ticks": "",
        },
    }


def _matrix_title(text: str, centre: float, top: float) -> dict:
    r"""A small multiple's title, centred above it."""
    return {
        "xref": "paper",
        "yref": "paper",
        "x": centre,
        "y": top,
        "yanchor": "bottom",
        "xanchor": "center",
        "text": wrap_title(text, TITLE_UNITS // COLUMNS),  # three titles side by side on a phone
        "showarrow": False,
        "font": {"size": 12},
    }


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
        layout |= _matrix_axes(suffix, x0, y1, width, height)
        annotations.append(_matrix_title(title, x0 + width / 2, y1))
    return figure(
        traces,
        title=t("compare.fig_matrices", lang, length=length),
        annotations=annotations,
        height=300 * rows + 80,
        margin={"l": 16, "r": 16, "t": 84, "b": 16},
        **layout,
    )


@dataclass(frozen=True)
class ExtrapolationPanel:
    r"""One task: its title, its band labels (inside L, 1–2·L, …) and, per encoding, one spread per band (anything
    with ``mean``, ``low`` and ``high``, e.g. :class:`posenc_lab.runs.Spread`); the verdict's tolerance."""

    title: str
    bands: tuple[str, ...]
    spreads: Mapping[str, Sequence]
    tolerance: float


PANEL_HEIGHT, PANEL_GAP = 190, 78  # px: a panel, and the room under it for its ticks and the next panel's title
TOP, BOTTOM = 110, 120  # px: the two-line title and the first panel's; the legend (up to three rows on a phone)
SPREAD_X = 0.5  # the encodings of one band share this much of the x axis, so their error bars do not overlap


def _spread_trace(
    bands: Sequence[str],
    spreads: Sequence,
    offset: float,
    *,
    name: str,
    group: str,
    colour: str,
    suffix: str,
    legend: bool,
) -> dict:
    r"""One encoding in one panel: its mean per band, shifted by ``offset``, with an error bar from low to high."""
    means = [float(s.mean) for s in spreads]
    return {
        "type": "scatter",
        "mode": "lines+markers",
        "x": [i + offset for i in range(len(spreads))],
        "y": means,
        "customdata": [[band, float(s.low), float(s.high)] for band, s in zip(bands, spreads, strict=True)],
        "error_y": {
            "type": "data",
            "symmetric": False,
            "array": [float(s.high) - m for s, m in zip(spreads, means, strict=True)],
            "arrayminus": [m - float(s.low) for s, m in zip(spreads, means, strict=True)],
            "color": colour,
            "thickness": 1.2,
            "width": 2,
        },
        "name": name,
        "legendgroup": group,
        "showlegend": legend,
        "line": {"color": colour, "width": 1.2},
        "marker": {"color": colour, "size": 6},
        "hovertemplate": "%{customdata[0]}: %{y:.3f}<br>[%{customdata[1]:.3f}, %{customdata[2]:.3f}]"
        "<extra>%{fullData.name}</extra>",
        "xaxis": f"x{suffix}",
        "yaxis": f"y{suffix}",
    }


def _band_axes(bands: Sequence[str], suffix: str, bottom: float, top: float) -> dict[str, dict]:
    r"""One panel's axes: the bands across (one tick each), the metric up, between ``bottom`` and ``top``."""
    return {
        f"xaxis{suffix}": {
            "domain": [0.0, 1.0],
            "anchor": f"y{suffix}",
            "tickmode": "array",
            "tickvals": list(range(len(bands))),
            "ticktext": list(bands),
            "range": [-0.5, len(bands) - 0.5],
            "tickfont": {"size": 11},
            "showgrid": False,
            "zeroline": False,
        },
        f"yaxis{suffix}": {
            "domain": [max(0.0, bottom), min(1.0, top)],
            "anchor": f"x{suffix}",
            "zeroline": True,
            "tickfont": {"size": 11},
        },
    }


def _panel_marks(panel: ExtrapolationPanel, suffix: str, bottom: float, top: float) -> tuple[list, list]:
    r"""One panel's annotations (its title, τ) and shapes (the training length dashed, the tolerance dotted)."""
    title = {
        "xref": "paper",
        "yref": "paper",
        "x": 0.0,
        "y": top,
        "xanchor": "left",
        "yanchor": "bottom",
        "text": wrap_title(panel.title),
        "showarrow": False,
        "font": {"size": 12},
    }
    wall = {  # the training length: between the "inside L" band and the first band past it
        "type": "line",
        "xref": f"x{suffix}",
        "yref": "paper",
        "x0": 0.5,
        "x1": 0.5,
        "y0": max(0.0, bottom),
        "y1": min(1.0, top),
        "line": {"color": WALL_COLOUR, "dash": "dash", "width": 1},
    }
    tolerance = {
        "type": "line",
        "xref": "paper",
        "yref": f"y{suffix}",
        "x0": 0,
        "x1": 1,
        "y0": panel.tolerance,
        "y1": panel.tolerance,
        "line": {"color": GREY, "dash": "dot", "width": 1},
    }
    tau = {
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
    return [title, tau], [wall, tolerance]


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
            offset = (j - (len(encodings) - 1) / 2) * SPREAD_X / max(len(encodings) - 1, 1)
            traces.append(
                _spread_trace(
                    panel.bands,
                    panel.spreads[encoding],
                    offset,
                    name=labels[encoding],
                    group=encoding,
                    colour=colours[encoding],
                    suffix=suffix,
                    legend=k == 0,
                )
            )
        layout |= _band_axes(panel.bands, suffix, bottom, top)
        notes, lines = _panel_marks(panel, suffix, bottom, top)
        annotations += notes
        shapes += lines
    return figure(
        traces,
        title=t("compare.fig_extrapolation", lang, length=train_length, seeds=seeds),
        height=height,
        annotations=annotations,
        shapes=shapes,
        legend=legend_below(),
        margin={"l": 48, "r": 16, "t": TOP, "b": BOTTOM},
        hovermode="closest",
        **layout,
    )
