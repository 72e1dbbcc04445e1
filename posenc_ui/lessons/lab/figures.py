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

from posenc_core.families import LAB_DEFAULT

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
    focused,
    legend_below,
    translucent,
)
from ...i18n import t

#: Six encodings and the optimum make a legend too wide for a phone's title row: it goes under the plot.
LEGEND_BELOW = {"legend": legend_below(), "margin": {"l": 56, "r": 16, "t": 40, "b": 40}}

#: Drawn at first: the six encodings the live run trains by default (posenc_core.families.LAB_DEFAULT); the 2025
#: designs, two of which lie on RoPE's line, are listed in the legend and drawn on a click.
SHOWN = frozenset(LAB_DEFAULT)

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


def _spread(x: np.ndarray, seeds: np.ndarray, name: str, colour: str, *, drawn: bool = True) -> list[dict]:
    r"""The mean over seeds as a line, over a band from the lowest to the highest seed (when there are several);
    not ``drawn``: listed in the legend only, drawn dashed when its name is clicked (p-RoPE's line lies on RoPE's:
    dashed, both stay visible)."""
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
    traces.append(_line(x, seeds.mean(axis=0), name, colour, dash="solid" if drawn else "dash"))
    return traces if drawn else [{**trace, "visible": "legendonly"} for trace in traces]


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
    shown = {trace["legendgroup"] for trace in data if trace.get("visible") != "legendonly"}
    focus = focused(data, shown, lang)
    axes = _axes(scored_by, metric, lang)
    layout = {"xaxis": {"type": axes.pop("xaxis_type")}} if "xaxis_type" in axes else {}
    return figure(
        data,
        title=title,
        height=460,
        **axes,
        **layout,
        **{**LEGEND_BELOW, **focus},
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
        for trace in _spread(x, seeds, t(f"enc.{name}", lang), ENCODING_COLOURS[name], drawn=name in SHOWN)
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
        data += _spread(x, seeds, t(f"enc.{name}", lang), ENCODING_COLOURS[name], drawn=name in SHOWN)
    shown = {trace["legendgroup"] for trace in data if trace.get("visible") != "legendonly"}
    return figure(
        data,
        title=t("lab.fig_training", lang),
        x=t("lab.axis_step", lang),
        y=t("lab.axis_loss", lang),
        height=420,
        **{**LEGEND_BELOW, **focused(data, shown, lang)},
    )


def designs(
    runs: tuple[str, ...],
    held: Mapping[str, list[float]],
    last: Mapping[str, int],
    *,
    designs: tuple[str, ...],
    holds: bool,
    lang: str,
) -> go.Figure:
    r"""How far past L each encoding holds on each run, as grouped bars on a log₂ axis (1 = fails right past L, the
    run's last band = holds to the end, 0 = did not learn the task, drawn at ½ where the axis says so). ``designs``
    are drawn in full colour, the encodings they build on paler; ``holds``: no design holds further than what it builds
    on (the title)."""
    names = [t(f"lab.design_run.{run}", lang) for run in runs]
    traces = []
    for encoding, values in held.items():
        design = encoding in designs
        traces.append(
            {
                "type": "bar",
                "x": names,
                "y": [max(value, 0.5) for value in values],
                "name": t(f"enc.{encoding}", lang),
                "marker": {
                    "color": ENCODING_COLOURS[encoding],
                    "opacity": 1.0 if design else 0.45,
                    "line": {"color": BLACK if design else WHITE, "width": 1},
                },
                "customdata": [
                    t("lab.design_hover", lang, held=_times(value), last=_times(last[run]))
                    if value
                    else t("lab.design_not_learned", lang)
                    for value, run in zip(values, runs, strict=True)
                ],
                "hovertemplate": "%{x}<br>%{customdata}<extra>%{fullData.name}</extra>",
            }
        )
    ticks = [0.5, 1, 2, 4, 8, 16, 32]
    return figure(
        traces,
        title=t("lab.fig_designs" if holds else "lab.fig_designs_neutral", lang),
        x=t("lab.axis_design_run", lang),
        y=t("lab.axis_design_held", lang),
        yaxis={
            "type": "log",
            "range": [math.log10(0.4), math.log10(48)],
            "tickvals": ticks,
            "ticktext": [t("lab.design_not_learned_tick", lang), *(_times(k) for k in ticks[1:])],
        },
        barmode="group",
        **LEGEND_BELOW,
    )


def _times(multiple: float) -> str:
    return "L" if multiple == 1 else f"{multiple:g}·L"
