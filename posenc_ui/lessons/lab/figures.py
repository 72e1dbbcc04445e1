r"""Figures of page 12: loss (or accuracy) per position for each encoding with its spread over seeds, RoPE's
zero-shot extensions, and training.

Every curve is the mean over seeds; the shaded band around it runs from the lowest to the highest seed at each
position (none for a single seed). Retrieval is drawn against distance on a logarithmic axis (it is tested out to
32 training lengths); the other tasks against position.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from ...figures.style import (
    BAND_ALPHA,
    BLACK,
    BLUE,
    ENCODING_COLOURS,
    GREEN,
    ORANGE,
    VERMILION,
    WALL_COLOUR,
    WHITE,
    figure,
    legend_below,
    translucent,
)
from ...i18n import t

#: Six encodings and the optimum make a legend too wide for a phone's title row: it goes under the plot.
LEGEND_BELOW = {"legend": legend_below(), "margin": {"l": 56, "r": 16, "t": 40, "b": 40}}

#: RoPE evaluated past its training length with each zero-shot scaling, in the order the lab runs them (as trained,
#: then the core registry's lab types: PI, NTK-aware, YaRN); a type added to the lab takes the next colour.
EXTENSION_COLOURS = (GREEN, ORANGE, BLUE, VERMILION, BLACK)


def _wall(x: float, label: str, *, log_axis: bool = False) -> dict[str, list[dict]]:
    r"""A labelled vertical line at the training length (on a log axis plotly places the label by log10 x)."""
    label_x = math.log10(x) if log_axis else x
    return {
        "shapes": [
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": x,
                "x1": x,
                "y0": 0,
                "y1": 1,
                "line": {"color": WALL_COLOUR, "dash": "dash", "width": 1.5},
            }
        ],
        "annotations": [
            {
                "xref": "x",
                "yref": "paper",
                "x": label_x,
                "y": 1.0,
                "xanchor": "left",
                "yanchor": "top",
                "text": f" {label}",
                "showarrow": False,
                "font": {"color": WALL_COLOUR},
                "bgcolor": translucent(WHITE, 0.8),
            }
        ],
    }


def _line(x: np.ndarray, y: np.ndarray, name: str, colour: str, *, dash: str = "solid") -> dict:
    return {
        "type": "scatter",
        "mode": "lines",
        "x": np.asarray(x, dtype=np.float32),
        "y": np.asarray(y, dtype=np.float32),
        "name": name,
        "legendgroup": name,
        "line": {"color": colour, "width": 1.8, "dash": dash},
    }


def _spread(x: np.ndarray, seeds: np.ndarray, name: str, colour: str) -> list[dict]:
    r"""The mean over seeds as a line, over a band from the lowest to the highest seed (when there are several)."""
    seeds = np.atleast_2d(seeds)
    traces = []
    if seeds.shape[0] > 1:
        low, high = seeds.min(axis=0), seeds.max(axis=0)
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": np.concatenate([x, x[::-1]]).astype(np.float32),
                "y": np.concatenate([high, low[::-1]]).astype(np.float32),
                "fill": "toself",
                "fillcolor": translucent(colour, BAND_ALPHA),
                "line": {"width": 0},
                "hoverinfo": "skip",
                "showlegend": False,
                "legendgroup": name,
                "name": name,
            }
        )
    traces.append(_line(x, seeds.mean(axis=0), name, colour))
    return traces


def _axes(scored_by: str, metric: str, lang: str) -> dict[str, object]:
    r"""Axis titles; distances (tested out to tens of training lengths) on a logarithmic axis."""
    extra: dict[str, object] = {"x": t(f"lab.axis_{scored_by}", lang), "y": t(f"lab.axis_{metric}", lang)}
    if scored_by == "distance":
        extra["xaxis_type"] = "log"
    return extra


def _per_position(
    data: list[dict],
    optimum: np.ndarray | None,
    x: np.ndarray,
    *,
    title: str,
    scored_by: str,
    train_length: int,
    metric: str,
    lang: str,
) -> go.Figure:
    r"""Curves over positions (or distances), the optimum dotted, the training length L dashed."""
    if optimum is not None:
        data = [*data, _line(x, optimum, t("lab.optimum", lang), BLACK, dash="dot")]
    axes = _axes(scored_by, metric, lang)
    layout = {"xaxis": {"type": axes.pop("xaxis_type")}} if "xaxis_type" in axes else {}
    return figure(
        data,
        title=title,
        height=460,
        **axes,
        **layout,
        **LEGEND_BELOW,
        **_wall(train_length, t("lab.wall", lang, length=train_length), log_axis=scored_by == "distance"),
    )


def by_position(
    x: np.ndarray,
    curves: Mapping[str, np.ndarray],
    optimum: np.ndarray | None,
    *,
    task: str,
    scored_by: str,
    train_length: int,
    metric: str,
    lang: str,
) -> go.Figure:
    r"""One line per encoding (mean over seeds, band = lowest to highest seed) over positions or distances
    (``scored_by``: ``"position"`` or ``"distance"``); the title is the task's (``lab.fig_by_position.<task>``)."""
    data = [
        trace
        for name, seeds in curves.items()
        for trace in _spread(x, seeds, t(f"enc.{name}", lang), ENCODING_COLOURS[name])
    ]
    factor = round(float(x.max()) / train_length)
    title = t(f"lab.fig_by_position.{task}", lang, length=train_length, factor=factor)
    return _per_position(
        data, optimum, x, title=title, scored_by=scored_by, train_length=train_length, metric=metric, lang=lang
    )


def extension(
    x: np.ndarray,
    curves: Mapping[str, np.ndarray],
    optimum: np.ndarray | None,
    *,
    scored_by: str,
    train_length: int,
    factor: int,
    metric: str,
    lang: str,
) -> go.Figure:
    r"""The RoPE model at ``factor`` × L: as trained ("None"), then with each rope_type's frequencies (keys of
    ``curves``, named as on page 7)."""
    data = [
        trace
        for index, (kind, seeds) in enumerate(curves.items())
        for trace in _spread(
            x, seeds, _extension_name(kind, lang), EXTENSION_COLOURS[min(index, len(EXTENSION_COLOURS) - 1)]
        )
    ]
    title = t("lab.fig_extension", lang, factor=factor)
    return _per_position(
        data, optimum, x, title=title, scored_by=scored_by, train_length=train_length, metric=metric, lang=lang
    )


def _extension_name(kind: str, lang: str) -> str:
    r"""The legend name of one extension curve: "RoPE as trained", or the method's name on page 7."""
    return t("lab.ext.None", lang) if kind == "None" else t(f"extension.method.{kind}", lang)


def training(curves: Mapping[str, np.ndarray], *, steps: int, lang: str) -> go.Figure:
    r"""Training loss (sampled along the run) per encoding, mean and spread over seeds."""
    data = []
    for name, seeds in curves.items():
        seeds = np.atleast_2d(seeds)
        x = np.linspace(1, steps, seeds.shape[1])
        data += _spread(x, seeds, t(f"enc.{name}", lang), ENCODING_COLOURS[name])
    return figure(
        data,
        title=t("lab.fig_training", lang),
        x=t("lab.axis_step", lang),
        y=t("lab.axis_loss", lang),
        height=420,
        **LEGEND_BELOW,
    )
