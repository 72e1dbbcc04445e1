r"""Figures of page 1: attention weights of a sentence and of its reordering, and the permutation residuals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ...figures.heatmap import heatmap_trace
from ...figures.style import ENCODING_COLOURS, SELECTED, SEQUENTIAL, TRANSPARENT, axis, figure, reference_line
from ...i18n import t

#: Residuals below this are rounding; bars of exactly 0 are drawn at ZERO_FLOOR on the log axis.
ROUNDING_LEVEL = 1e-12
ZERO_FLOOR = 1e-18


def token_labels(tokens: Sequence[str]) -> list[str]:
    r"""``"0 天", "1 天", …``: unique axis labels (equal tokens would merge on a category axis)."""
    return [f"{i} {tok}" for i, tok in enumerate(tokens)]


def sentence(tokens: Sequence[str]) -> str:
    r"""Tokens joined as written: no spaces between CJK tokens, spaces between Latin words."""
    joiner = "" if all(ord(ch) > 0x2E80 for tok in tokens for ch in tok) else " "
    return joiner.join(tokens)


def attention_map(
    weights: np.ndarray, tokens: Sequence[str], *, encoding: str, showscale: bool, lang: str
) -> go.Figure:
    r"""The (L, L) attention weights of one sentence: queries down, keys across, titled by the sentence.

    Keys are labelled by index only (the tokens are on the query axis and in the hover), so the map stays
    legible at phone width.
    """
    labels = np.asarray(token_labels(tokens))
    hover = f"{axis('query', lang)}: %{{y}}<br>{axis('key', lang)}: %{{customdata}}<br>%{{z:.3f}}"
    trace = heatmap_trace(
        weights,
        x=np.arange(len(tokens)),
        y=labels,
        colorscale=SEQUENTIAL,
        zmin=0.0,
        zmax=1.0,
        hover=hover,
        showscale=showscale,
        customdata=np.broadcast_to(labels, weights.shape),
    )
    title = t("why.fig_attention", lang, sentence=sentence(tokens), encoding=t(f"enc.{encoding}", lang))
    return figure(
        [trace],
        title=title,
        x=axis("key", lang),
        y=axis("query", lang),
        height=340,
        xaxis={"dtick": 1},
        yaxis={"autorange": "reversed"},
    )


def residual_bars(residuals: Mapping[str, float], *, selected: str, lang: str) -> go.Figure:
    r"""One bar per encoding: :math:`\max|f(Px) - Pf(x)|` on a log axis, with the rounding level marked."""
    names = list(residuals)
    values = np.array([residuals[n] for n in names])
    bar = {
        "type": "bar",
        "x": [t(f"enc.{n}", lang) for n in names],
        "y": np.maximum(values, ZERO_FLOOR),
        "text": [f"{v:.1e}" if v > 0 else "0" for v in values],
        "textposition": "outside",
        "marker": {
            "color": [ENCODING_COLOURS[n] for n in names],
            "line": {"color": [SELECTED if n == selected else TRANSPARENT for n in names], "width": 2.5},
        },
        "hovertemplate": "%{x}: %{text}<extra></extra>",
    }
    return figure(
        [bar],
        title=t("why.fig_residuals", lang),
        x=axis("encoding", lang),
        y=axis("residual", lang),
        yaxis={"type": "log", "range": [np.log10(ZERO_FLOOR), 1.5], "exponentformat": "power"},
        **reference_line(ROUNDING_LEVEL, t("why.rounding_level", lang), dash="dash", left=True, log_axis=True),
    )


def scaling(dims: np.ndarray, top: np.ndarray, top_scaled: np.ndarray, *, keys: int, lang: str) -> go.Figure:
    r"""The mean largest softmax weight over ``keys`` random keys against the head size d (log axis), for q·k and for
    q·k/√d, with uniform attention 1/keys as a reference line."""
    traces = [
        {
            "type": "scatter",
            "x": dims,
            "y": values,
            "mode": "lines+markers",
            "name": t(f"why.scaling_{name}", lang),
            "line": {"color": colour, "width": 2},
            "hovertemplate": "d = %{x:.0f}: %{y:.2f}<extra>%{fullData.name}</extra>",
        }
        for name, values, colour in (("raw", top, ENCODING_COLOURS["none"]), ("scaled", top_scaled, SELECTED))
    ]
    return figure(
        traces,
        title=t("why.fig_scaling", lang, keys=keys),
        x=t("why.axis_head_size", lang),
        y=t("why.axis_top_weight", lang),
        xaxis={"type": "log", "tickvals": list(dims), "ticktext": [f"{d:.0f}" for d in dims]},
        yaxis={"range": [0, 1.05]},
        **reference_line(1.0 / keys, t("why.uniform_line", lang, keys=keys)),
    )
