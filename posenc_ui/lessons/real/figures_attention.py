r"""Figures of the real-model page, sections 2 and 3: where attention goes by distance, the classes of heads, the
trained heads beside page 6's long-range decay, the first token's share by layer and head, and StreamingLLM's loss.
Pure builders: arrays and translated titles in, ``go.Figure`` out (the numbers come from :mod:`posenc_real`)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ...figures.heatmap import heatmap_trace
from ...figures.style import (
    BAND_ALPHA,
    BLUE,
    DIVERGING,
    GREY,
    INK,
    ORANGE,
    PURPLE,
    SEQUENTIAL,
    VERMILION,
    figure,
    legend_below,
    line_trace,
    translucent,
    vertical_line,
)
from ...i18n import t

#: One colour per class of head (posenc_real.attention.HEAD_CLASSES), on every figure that shows them.
CLASS_COLOURS = {
    "previous_token": VERMILION,
    "local": ORANGE,
    "first_token": PURPLE,
    "far": BLUE,
    "mixed": GREY,
}
#: The StreamingLLM runs: the whole text in view, the window with the first tokens kept, the window alone.
STREAM_COLOURS = {"full": INK, "with": BLUE, "without": VERMILION}


def bin_labels(edges: np.ndarray) -> list[str]:
    r"""'0', '1', '2', '3', '4–7', … for the distance bins [edges[b], edges[b + 1])."""
    return [str(lo) if hi - lo == 1 else f"{lo}–{hi - 1}" for lo, hi in itertools.pairwise(edges)]


def distance_heatmap(ratio: np.ndarray, edges: np.ndarray, *, title: str, lang: str) -> go.Figure:
    r"""Every head (rows: layer 0 head 0 … layer 29 head 8) against binned distance (columns): log₂ of its mass there
    ÷ uniform causal attention's, on a diverging scale centred on 0 (as flat as uniform)."""
    layers, heads, _ = ratio.shape
    z = np.log2(np.clip(ratio.reshape(layers * heads, -1), 2.0**-8, 2.0**8))
    rows = [f"L{layer} H{head}" for layer in range(layers) for head in range(heads)]
    hover = f"%{{y}}<br>{t('real.axis_distance', lang)} %{{x}}<br>{t('real.ratio_hover', lang)} 2^%{{z:.2f}}"
    trace = heatmap_trace(
        z,
        x=np.asarray(bin_labels(edges)),
        y=np.asarray(rows),
        colorscale=DIVERGING,
        zmid=0.0,
        zmin=-6.0,
        zmax=6.0,
        hover=hover,
        colorbar_title=t("real.ratio_colorbar", lang),
    )
    trace["colorbar"] |= {"tickvals": [-6, -3, 0, 3, 6], "ticktext": ["1/64", "1/8", "1", "8", "64"]}
    ticks = [f"L{layer} H0" for layer in range(0, layers, 3)]
    return figure(
        [trace],
        title=title,
        x=t("real.axis_distance_bin", lang),
        y=t("real.axis_head", lang),
        xaxis={"type": "category"},
        yaxis={"autorange": "reversed", "tickvals": ticks, "ticktext": [r.split()[0] for r in ticks]},
        height=560,
    )


def classes_by_layer(classes: np.ndarray, names: Sequence[str], *, title: str, lang: str) -> go.Figure:
    r"""Stacked bars: how many of each layer's heads fall in each class."""
    layers = np.arange(classes.shape[0])
    hover = f"{t('real.axis_layer', lang)} %{{x}}<br>%{{y}} {t('real.heads_unit', lang)}"
    traces = [
        {
            "type": "bar",
            "x": layers,
            "y": (classes == k).sum(axis=1),
            "name": t(f"real.class.{name}", lang),
            "marker": {"color": CLASS_COLOURS[name]},
            "hovertemplate": hover + "<extra>%{fullData.name}</extra>",
        }
        for k, name in enumerate(names)
    ]
    return figure(
        traces,
        title=title,
        x=t("real.axis_layer", lang),
        y=t("real.axis_heads", lang),
        barmode="stack",
        yaxis={"range": [0, classes.shape[1]], "dtick": 3},
        legend=legend_below() | {"traceorder": "normal"},
        height=440,
    )


def decay_beside_trained(
    distances: np.ndarray,
    bound: np.ndarray,
    trained_distances: np.ndarray,
    median: np.ndarray,
    quartiles: tuple[np.ndarray, np.ndarray],
    *,
    title: str,
    lang: str,
) -> go.Figure:
    r"""Two panels, one above the other, on the same log distance axis: above, page 6's long-range bound for the
    model's head size and base (÷ its value at distance 0); below, the trained heads' weight per key ÷ uniform
    (median and quartiles over heads), 1 dotted."""
    hover = f"{t('real.axis_distance', lang)} %{{x}}<br>%{{y:.3g}}"
    left = line_trace(distances, bound, t("real.decay_bound", lang), INK, hover)
    low, high = quartiles
    band = {
        "type": "scatter",
        "x": np.concatenate([trained_distances, trained_distances[::-1]]),
        "y": np.concatenate([high, low[::-1]]),
        "fill": "toself",
        "fillcolor": translucent(BLUE, BAND_ALPHA),
        "line": {"width": 0},
        "name": t("real.decay_quartiles", lang),
        "hoverinfo": "skip",
        "xaxis": "x2",
        "yaxis": "y2",
    }
    right = line_trace(trained_distances, median, t("real.decay_median", lang), BLUE, hover) | {
        "xaxis": "x2",
        "yaxis": "y2",
    }
    uniform = {
        "type": "line",
        "xref": "x2",
        "yref": "y2",
        "x0": float(trained_distances[0]),
        "x1": float(trained_distances[-1]),
        "y0": 1.0,
        "y1": 1.0,
        "line": {"color": GREY, "dash": "dot", "width": 1.5},
    }
    distance = {"type": "log", "title": {"text": t("real.axis_distance", lang)}}
    return figure(
        [left, band, right],
        title=title,
        xaxis={**distance, "anchor": "y"},
        yaxis={"type": "log", "domain": [0.62, 1.0], "title": {"text": t("real.axis_decay_bound", lang)}},
        xaxis2={**distance, "anchor": "y2", "matches": "x"},
        yaxis2={"type": "log", "domain": [0.0, 0.4], "anchor": "x2", "title": {"text": t("real.axis_ratio", lang)}},
        shapes=[uniform],
        legend=legend_below(),
        height=640,
    )


def first_token_share(share: np.ndarray, *, title: str, lang: str) -> go.Figure:
    r"""Layer (down) × head (across): the mean share of attention on the first token, 0 … 1, with a colour bar."""
    layers, heads = share.shape
    hover = (
        f"{t('real.axis_layer', lang)} %{{y}}<br>{t('real.axis_head_index', lang)} %{{x}}<br>"
        f"{t('real.first_share', lang)} %{{z:.0%}}"
    )
    trace = heatmap_trace(
        share,
        x=np.arange(heads),
        y=np.arange(layers),
        colorscale=SEQUENTIAL,
        zmin=0.0,
        zmax=1.0,
        hover=hover,
        colorbar_title=t("real.first_share", lang),
    )
    trace["colorbar"] |= {"tickformat": ".0%"}
    return figure(
        [trace],
        title=title,
        x=t("real.axis_head_index", lang),
        y=t("real.axis_layer", lang),
        xaxis={"dtick": 1},
        yaxis={"autorange": "reversed", "dtick": 3},
        height=560,
    )


def streaming_curves(
    positions: np.ndarray,
    curves: Mapping[str, np.ndarray],
    losses: Mapping[str, float],
    *,
    window: int,
    sinks: int,
    smoothing: int,
    title: str,
    lang: str,
) -> go.Figure:
    r"""The loss per token (averaged over ``smoothing`` tokens) against the position of the token predicted: the
    whole text in view, the window with the first ``sinks`` tokens kept, and the window alone; each run's mean loss in
    its name; a dotted line where the window alone starts to slide (its cache full at ``window`` tokens)."""
    hover = f"{t('real.axis_predicted', lang)} %{{x}}<br>%{{y:.2f}} {t('real.nats', lang)}"
    traces = [
        line_trace(
            positions,
            curves[name],
            t(f"real.stream_{name}", lang, sinks=sinks, window=window, loss=f"{losses[name]:.2f}"),
            STREAM_COLOURS[name],
            hover,
            dash="dot" if name == "full" else "solid",
        )
        for name in ("full", "with", "without")
    ]
    slide = float(min(window, positions[-1]))
    return figure(
        traces,
        title=title,
        x=t("real.axis_predicted", lang),
        y=t("real.axis_loss_smoothed", lang, tokens=smoothing),
        **vertical_line(slide, t("real.stream_slides", lang, window=window), log_axis=False),
        legend=legend_below(),
        height=460,
    )
