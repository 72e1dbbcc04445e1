r"""Figures of page 10 (position at length): logit multipliers and attention entropy against the number of keys,
RoPE's similarity sum B_m and the smallest base per context length beside real models' bases, a StreamingLLM cache
step by step, and the sink's row sums. Pure builders: arrays in, ``go.Figure`` out (the heatmap grids reuse
:func:`posenc_ui.lessons.alibi.figures.panel_heatmaps`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ...figures.heatmap import heatmap_trace
from ...figures.style import (
    BLUE,
    GREEN,
    GREY,
    INK,
    ORANGE,
    PURPLE,
    SEQUENTIAL,
    SKY,
    TRANSPARENT,
    VERMILION,
    axis,
    figure,
    legend_below,
    line_trace,
    vertical_line,
)
from ...i18n import t

#: One colour per scheme across the temperature figures; the bases of real models keep theirs on the B_m figure.
SCHEME_COLOURS = {"plain": GREY, "llama4": VERMILION, "yarn": GREEN, "log_n": PURPLE, "ssmax": BLUE}
BASE_COLOURS = (BLUE, ORANGE, GREEN, PURPLE, SKY, VERMILION)


def multipliers(
    lengths: np.ndarray, curves: Mapping[str, np.ndarray], *, training_length: int, title: str, lang: str
) -> go.Figure:
    r"""Each scheme's logit multiplier against the number of keys n (log x), the training length L marked."""
    hover = "n = %{x:,}<br>× %{y:.3f}"
    traces = [
        line_trace(lengths, v, t(f"length.scheme.{k}", lang), SCHEME_COLOURS[k], hover) for k, v in curves.items()
    ]
    return figure(
        traces,
        title=title,
        x=t("length.axis_keys", lang),
        y=t("length.axis_multiplier", lang),
        xaxis={"type": "log"},
        **vertical_line(float(training_length), f"L = {training_length:,}"),
        legend=legend_below(),
        height=440,
    )


def entropy(
    lengths: np.ndarray, curves: Mapping[str, np.ndarray], *, training_length: int, title: str, lang: str
) -> go.Figure:
    r"""Mean attention entropy (nats) against n (log x) for each scheme, ln n dotted, L marked."""
    hover = "n = %{x:,}<br>H = %{y:.3f}"
    traces = [line_trace(lengths, np.log(lengths), t("length.scheme.uniform", lang), GREY, hover, dash="dot")]
    traces += [
        line_trace(lengths, v, t(f"length.scheme.{k}", lang), SCHEME_COLOURS[k], hover) for k, v in curves.items()
    ]
    return figure(
        traces,
        title=title,
        x=t("length.axis_keys", lang),
        y=t("length.axis_entropy", lang),
        xaxis={"type": "log"},
        **vertical_line(float(training_length), f"L = {training_length:,}"),
        legend=legend_below(),
        height=460,
    )


def similarity(distances: np.ndarray, curves: Sequence[tuple[str, np.ndarray]], *, title: str, lang: str) -> go.Figure:
    r"""B_m = Σ cos(mθ_i) against the distance m for several bases (the lowest value in each bin), 0 as a line."""
    hover = "m ≈ %{x:,}<br>B = %{y:.2f}"
    traces = [
        line_trace(distances, values, name, BASE_COLOURS[k % len(BASE_COLOURS)], hover)
        for k, (name, values) in enumerate(curves)
    ]
    zero = {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "y0": 0,
        "y1": 0,
        "line": {"color": INK, "width": 1},
    }
    return figure(
        traces,
        title=title,
        x=t("length.axis_distance", lang),
        y=t("length.axis_similarity", lang),
        shapes=[zero],
        legend=legend_below(),
        height=440,
    )


def bounds(
    lengths: np.ndarray,
    ours: np.ndarray,
    published: Mapping[str, tuple[np.ndarray, np.ndarray]],
    models: Sequence[tuple[str, int, float, bool, int]],
    *,
    title: str,
    lang: str,
) -> go.Figure:
    r"""The smallest base per context length (ours, on a grid; the published tables as markers) on log–log axes,
    with each model's (context, base) as a point: filled where its own B_m stays ≥ 0 over its context. A model whose
    score also sums dimensions that never turn (``m[4]`` > 0, multi-head latent attention) says so on hover."""
    hover = f"{t('length.axis_context', lang)} %{{x:,}}<br>{t('length.axis_base', lang)} %{{y:,.3r}}"
    traces = [
        {
            "type": "scatter",
            "x": lengths,
            "y": ours,
            "mode": "lines+markers",
            "name": t("length.bound_ours", lang),
            "line": {"color": INK, "width": 2.5},  # a bound at each L drawn, not between them
            "hovertemplate": hover + "<extra>%{fullData.name}</extra>",
        }
    ]
    symbols = {"paper": "triangle-up", "su": "x"}
    for key, (x, y) in published.items():
        traces.append(
            {
                "type": "scatter",
                "x": x,
                "y": y,
                "mode": "markers",
                "name": t(f"length.bound_{key}", lang),
                "marker": {"color": GREY if key == "paper" else ORANGE, "symbol": symbols[key], "size": 9},
                "hovertemplate": hover + "<extra>%{fullData.name}</extra>",
            }
        )
    for holds in (True, False):
        chosen = [m for m in models if m[3] is holds]
        traces.append(
            {
                "type": "scatter",
                "x": [m[1] for m in chosen],
                "y": [m[2] for m in chosen],
                "text": [t("length.model_still", lang, name=m[0], dims=m[4]) if m[4] else m[0] for m in chosen],
                "mode": "markers",
                "name": t("length.models_hold" if holds else "length.models_fail", lang),
                "marker": {
                    "color": BLUE if holds else TRANSPARENT,
                    "line": {"color": BLUE, "width": 2},
                    "size": 10,
                    "symbol": "circle",
                },
                "hovertemplate": "%{text}<br>" + hover + "<extra></extra>",
            }
        )
    return figure(
        traces,
        title=title,
        x=t("length.axis_context", lang),
        y=t("length.axis_base", lang),
        xaxis={"type": "log"},
        yaxis={"type": "log", "exponentformat": "power"},
        legend=legend_below(),
        height=480,
    )


def cache(positions: np.ndarray, *, title: str, lang: str) -> go.Figure:
    r"""Steps down (the query t), text positions across; a cell is the position a kept token gets in the cache, blank
    where the token is evicted or not yet read."""
    steps, tokens = positions.shape
    hover = (
        f"{t('length.axis_step', lang)} %{{y}}<br>{t('length.axis_token', lang)} %{{x}}<br>"
        f"{t('length.cache_position', lang)} %{{z}}"
    )
    trace = heatmap_trace(
        positions,
        x=np.arange(tokens),
        y=np.arange(steps),
        colorscale=SEQUENTIAL,
        hover=hover,
        colorbar_title=t("length.cache_position", lang),
        zmin=0,
    )
    return figure(
        [trace],
        title=title,
        x=t("length.axis_token", lang),
        y=t("length.axis_step", lang),
        yaxis={"autorange": "reversed"},
        height=440,
    )


def row_sums(sums: Mapping[str, np.ndarray], *, title: str, lang: str) -> go.Figure:
    r"""The total weight each query row gives the real keys: 1 for plain softmax, below 1 with a sink."""
    hover = f"{axis('query', lang)} %{{x}}<br>Σ = %{{y:.4f}}"
    colours = {"plain": GREY, "sink": VERMILION}
    traces = [
        line_trace(np.arange(v.shape[0]), v, t(f"length.sums_{k}", lang), colours[k], hover) | {"mode": "lines+markers"}
        for k, v in sums.items()
    ]
    return figure(
        traces,
        title=title,
        x=axis("query", lang),
        y=t("length.axis_row_sum", lang),
        yaxis={"range": [0, 1.05]},
        legend=legend_below(),
        height=380,
    )
