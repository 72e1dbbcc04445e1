r"""Figures of page 9: loss (or accuracy) per position for each encoding, RoPE's zero-shot extensions, training."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from ..i18n import t
from .style import BLACK, BLUE, ENCODING_COLOURS, GREEN, ORANGE, VERMILION, WALL_COLOUR, figure

#: Six encodings and the optimum make a legend too wide for a phone's title row: it goes under the plot.
LEGEND_BELOW = {"legend": {"orientation": "h", "x": 0.0, "xanchor": "left", "y": -0.2, "yanchor": "top"},
                "margin": {"l": 56, "r": 16, "t": 40, "b": 40}}  # fmt: skip

#: RoPE evaluated past its training length with each zero-shot scaling (None: as trained).
EXTENSION_COLOURS = {"None": GREEN, "linear": ORANGE, "ntk": BLUE, "yarn": VERMILION}


def _wall(x: float, label: str) -> dict[str, list[dict]]:
    r"""A labelled vertical line at the training length."""
    return {
        "shapes": [{"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1,
                    "line": {"color": WALL_COLOUR, "dash": "dash", "width": 1.5}}],
        "annotations": [{"xref": "x", "yref": "paper", "x": x, "y": 1.0, "xanchor": "left", "yanchor": "top",
                         "text": f" {label}", "showarrow": False, "font": {"color": WALL_COLOUR}}],
    }  # fmt: skip


def _curve(y: np.ndarray, name: str, colour: str, *, dash: str = "solid", x: np.ndarray | None = None) -> dict:
    r"""A line trace; x defaults to positions 1, 2, … (position t predicts token t + 1)."""
    x = np.arange(1, y.size + 1) if x is None else x
    return {"type": "scatter", "mode": "lines", "x": x, "y": np.asarray(y, dtype=np.float32), "name": name,
            "line": {"color": colour, "width": 1.8, "dash": dash}}  # fmt: skip


def _optimum(y: np.ndarray, lang: str) -> dict:
    return _curve(y, t("lab.optimum", lang), BLACK, dash="dot")


def _y_title(metric: str, lang: str) -> str:
    return t(f"lab.axis_{metric}", lang)


def _per_position(
    data: list[dict], optimum: np.ndarray | None, *, title: str, config: Mapping[str, int], metric: str, lang: str
) -> go.Figure:
    r"""Lines over positions, the optimum dotted (cut to the lines' length), the training length L dashed."""
    if optimum is not None and data:
        data = [*data, _optimum(optimum[: len(data[0]["y"])], lang)]
    length = config["train_length"]
    return figure(
        data, title=title, x=t("lab.axis_position", lang), y=_y_title(metric, lang), height=440,
        **LEGEND_BELOW, **_wall(length, t("lab.wall", lang, length=length)),
    )  # fmt: skip


def by_position(
    curves: Mapping[str, np.ndarray],
    optimum: np.ndarray | None,
    *,
    config: Mapping[str, int],
    metric: str,
    lang: str,
) -> go.Figure:
    r"""One line per encoding over positions 1 … 8L."""
    data = [_curve(y, t(f"enc.{name}", lang), ENCODING_COLOURS.get(name, BLACK)) for name, y in curves.items()]
    title = t("lab.fig_by_position", lang, length=config["train_length"])
    return _per_position(data, optimum, title=title, config=config, metric=metric, lang=lang)


def extension(
    curves: Mapping[str, np.ndarray],
    optimum: np.ndarray | None,
    *,
    config: Mapping[str, int],
    metric: str,
    lang: str,
) -> go.Figure:
    r"""The RoPE model at ``extension_factor`` × L: as trained, and with PI, NTK-aware and YaRN frequencies."""
    data = [_curve(y, t(f"lab.ext.{kind}", lang), EXTENSION_COLOURS.get(kind, BLACK)) for kind, y in curves.items()]
    title = t("lab.fig_extension", lang, factor=config["extension_factor"])
    return _per_position(data, optimum, title=title, config=config, metric=metric, lang=lang)


def training(curves: Mapping[str, np.ndarray], *, optimum: float, steps: int, lang: str) -> go.Figure:
    r"""Training loss (sampled along the run) per encoding, and the optimum."""
    data = [
        _curve(y, t(f"enc.{name}", lang), ENCODING_COLOURS.get(name, BLACK), x=np.linspace(1, steps, y.size))
        for name, y in curves.items()
    ]
    data.append(_curve(np.array([optimum, optimum]), t("lab.optimum", lang), BLACK, dash="dot", x=np.array([1, steps])))
    return figure(
        data, title=t("lab.fig_training", lang), x=t("lab.axis_step", lang), y=_y_title("loss", lang), height=420,
        **LEGEND_BELOW,
    )  # fmt: skip
