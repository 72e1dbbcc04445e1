r"""Figures of page 7's "why" section: each method's divisor per pair (RoPE as a base-β number system), attention
entropy against context length with and without a logit factor, and the distance each method shows the model
(ReRoPE's clip). Pure builders: arrays in, ``go.Figure`` out."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from ...figures.style import (
    BLUE,
    GREEN,
    GREY,
    ORANGE,
    PURPLE,
    VERMILION,
    axis,
    figure,
    legend_below,
    line_trace,
    vertical_line,
)
from ...i18n import t

#: PI, NTK-aware and YaRN keep the colours of one family across the section; plain RoPE is grey as on the master chart.
METHOD_COLOURS = {"plain": GREY, "linear": BLUE, "ntk": ORANGE, "yarn": GREEN, "log_n": PURPLE, "rerope": VERMILION}


def divisors(curves: Mapping[str, np.ndarray], *, factor: float, title: str, lang: str) -> go.Figure:
    r"""Per pair, :math:`\theta_i/\theta'_i` for each method (log y): PI flat at s, NTK-aware rising 1 → s."""
    hover = f"{axis('pair', lang)} %{{x}}<br>θ/θ′ = %{{y:.4g}}"
    traces = [
        line_trace(np.arange(values.shape[0]), values, t(f"extension.method.{key}", lang), METHOD_COLOURS[key], hover)
        for key, values in curves.items()
    ]
    return figure(
        traces,
        title=title,
        x=axis("pair", lang),
        y=t("extension.axis_divisor", lang),
        yaxis={"type": "log", "range": [-0.1, float(np.log10(factor)) + 0.1]},
        legend=legend_below(),
        height=420,
    )


def entropy(
    lengths: np.ndarray,
    curves: Mapping[str, np.ndarray],
    *,
    training_length: int,
    current: int,
    title: str,
    lang: str,
) -> go.Figure:
    r"""Mean attention entropy (nats) against the number of keys n (log x), ln n dotted, L and s·L marked."""
    hover = "n = %{x:,}<br>H = %{y:.3f} nats"
    traces = [
        line_trace(
            lengths, np.log(lengths), t("extension.entropy.uniform", lang), METHOD_COLOURS["plain"], hover, dash="dot"
        )
    ]
    traces += [
        line_trace(lengths, v, t(f"extension.entropy.{key}", lang), METHOD_COLOURS[key], hover)
        for key, v in curves.items()
    ]
    trained = vertical_line(float(training_length), f"L = {training_length:,}")
    chosen = vertical_line(float(current), f"s·L = {current:,}")
    return figure(
        traces,
        title=title,
        x=t("extension.axis_keys", lang),
        y=t("extension.axis_entropy", lang),
        xaxis={"type": "log"},
        shapes=trained["shapes"] + chosen["shapes"],
        annotations=trained["annotations"] + chosen["annotations"],
        legend=legend_below(),
        height=440,
    )


def seen_distance(
    distances: np.ndarray, curves: Mapping[str, np.ndarray], *, length: int, title: str, lang: str
) -> go.Figure:
    r"""The relative position each method hands RoPE against the true distance (log-log); L as a line."""
    hover = f"{t('extension.axis_distance', lang)} %{{x:,}}<br>→ %{{y:,.1f}}"
    traces = [
        line_trace(distances, v, t(f"extension.seen.{key}", lang), METHOD_COLOURS[key], hover)
        for key, v in curves.items()
    ]
    line = {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "y0": length,
        "y1": length,
        "line": {"color": GREY, "dash": "dot", "width": 1.5},
    }
    note = {
        "xref": "paper",
        "x": 0.0,
        "xanchor": "left",
        "y": np.log10(length),
        "yanchor": "bottom",
        "showarrow": False,
        "text": t("extension.line_train", lang, length=f"{length:,}"),
        "font": {"color": GREY},
    }
    return figure(
        traces,
        title=title,
        x=t("extension.axis_distance", lang),
        y=t("extension.axis_seen", lang),
        xaxis={"type": "log"},
        yaxis={"type": "log"},
        shapes=[line],
        annotations=[note],
        legend=legend_below(),
        height=420,
    )
