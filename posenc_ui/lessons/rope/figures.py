r"""Figures of page 6 (RoPE): relative scores, the two pairings, long-range decay, periods and near repeats; the
clocks that draw angles live in :mod:`.figures_clocks` and are importable from here, as the page does. Pure builders:
arrays in, ``go.Figure`` out."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ...figures.heatmap import heatmap_trace
from ...figures.style import (
    BAND_ALPHA,
    BLUE,
    DIVERGING,
    GREEN,
    GREY,
    NOT_FOUND,
    SELECTED,
    SEQUENTIAL,
    THEORY,
    VERMILION,
    WHITE,
    axis,
    figure,
    legend_below,
    translucent,
)
from ...i18n import t
from .figures_clocks import CLOCK_COLUMNS, clocks, toy_clock

__all__ = [
    "CLOCK_COLUMNS",
    "clocks",
    "decay",
    "mismatch_curve",
    "near_repeats",
    "offset_curve",
    "pairing_strip",
    "periods",
    "random_band",
    "score_matrix",
    "score_window",
    "toy_clock",
]

#: Cells are labelled with their pair index up to this many dimensions.
MAX_LABELLED = 32
#: Log-axis ticks at every decade, written 10⁰ … 10⁶.
LOG_AXIS = {"type": "log", "exponentformat": "power", "dtick": 1}


# --- relative scores ---------------------------------------------------------------------------------------------


def score_window(
    scores: np.ndarray, query_positions: np.ndarray, key_positions: np.ndarray, m: int, n: int, *, lang: str
) -> go.Figure:
    r"""Scores :math:`q_{m'} \cdot k_{n'}` around (m, n): constant along every diagonal, the one of (m, n) outlined."""
    limit = float(np.max(np.abs(scores))) or 1.0
    hover = "m′ = %{y}, n′ = %{x}<br>n′ − m′ = %{customdata}<br>%{z:.3f}"
    trace = heatmap_trace(
        scores,
        x=key_positions,
        y=query_positions,
        colorscale=DIVERGING,
        zmid=0.0,
        zmin=-limit,
        zmax=limit,
        customdata=(key_positions[None, :] - query_positions[:, None]).astype(np.int32),
        hover=hover,
    )
    lo, hi = max(query_positions[0], key_positions[0] - (n - m)), min(query_positions[-1], key_positions[-1] - (n - m))
    diagonal = {
        "type": "scatter",
        "x": [lo + n - m, hi + n - m],
        "y": [lo, hi],
        "mode": "lines",
        "hoverinfo": "skip",
        "line": {"color": SELECTED, "dash": "dash", "width": 1.5},
        "showlegend": False,
    }
    chosen = {
        "type": "scatter",
        "x": [n],
        "y": [m],
        "mode": "markers",
        "hoverinfo": "skip",
        "showlegend": False,
        "marker": {"symbol": "square-open", "size": 12, "color": SELECTED, "line": {"width": 2.5}},
    }
    return figure(
        [trace, diagonal, chosen],
        title=t("rope.fig_window", lang, m=m, n=n),
        x=t("rope.axis_key", lang),
        y=t("rope.axis_query", lang),
        height=420,
        yaxis={"autorange": "reversed"},
    )


def offset_curve(
    offsets: np.ndarray,
    curve: np.ndarray,
    sample_offsets: np.ndarray,
    sample_scores: np.ndarray,
    chosen: tuple[int, int, float],
    *,
    lang: str,
) -> go.Figure:
    r""":math:`q_0 \cdot k_r` against r (line), with :math:`q_{m'} \cdot k_{n'}` for random (m′, n′) at r = n′ − m′
    (dots) and the chosen (m, n) (diamond): every dot lands on the line."""
    m, n, score = chosen
    traces = [
        {
            "type": "scatter",
            "x": offsets,
            "y": curve,
            "mode": "lines",
            "line": {"color": GREEN, "width": 1.5},
            "name": t("rope.curve_q0", lang),
            "hovertemplate": "r = %{x}: %{y:.3f}<extra></extra>",
        },
        {
            "type": "scatter",
            "x": sample_offsets,
            "y": sample_scores,
            "mode": "markers",
            "marker": {"color": BLUE, "size": 7, "line": {"color": "white", "width": 1}},
            "name": t("rope.curve_samples", lang),
            "hovertemplate": "n′ − m′ = %{x}: %{y:.3f}<extra></extra>",
        },
        {
            "type": "scatter",
            "x": [n - m],
            "y": [score],
            "mode": "markers",
            "name": f"q<sub>{m}</sub>·k<sub>{n}</sub>",
            "marker": {"color": VERMILION, "size": 13, "symbol": "diamond", "line": {"color": "white", "width": 1}},
            "hovertemplate": f"m = {m}, n = {n}: %{{y:.6f}}<extra></extra>",
        },
    ]
    return figure(
        traces,
        title=t("rope.fig_offsets", lang),
        x=t("rope.axis_relative", lang),
        y=t("rope.axis_score", lang),
        height=420,
        legend=legend_below(),
    )


# --- the two pairings --------------------------------------------------------------------------------------------


def pairing_strip(
    pair_interleaved: np.ndarray, pair_half: np.ndarray, highlight: Sequence[int], *, lang: str
) -> go.Figure:
    r"""Which pair each dimension belongs to: interleaved on top, half-split below, coloured by pair index.

    For the ``highlight`` pairs a line joins each dimension to the slot it occupies in the other layout.
    """
    dim = pair_interleaved.shape[0]
    z = np.stack([pair_interleaved, np.full(dim, np.nan), pair_half]).astype(np.float32)  # middle row: a gap
    labels = {}
    if dim <= MAX_LABELLED:
        text = np.stack([pair_interleaved.astype(str), np.full(dim, ""), pair_half.astype(str)])
        labels = {"text": text, "texttemplate": "%{text}", "textfont": {"size": 11}}
    hover = f"{t('rope.axis_dim', lang)} %{{x}}<br>{t('rope.pair_of', lang)} %{{z:.0f}}"
    trace = heatmap_trace(
        z,
        x=np.arange(dim),
        y=np.arange(3),
        colorscale=SEQUENTIAL,
        zmin=0,
        zmax=max(dim // 2 - 1, 1),
        hover=hover,
        colorbar_title="i",
        xgap=1 if dim <= 128 else 0,
        ygap=0,
        **labels,
    )
    half = dim // 2
    links_x, links_y = [], []
    for i in highlight:
        for src, dst in ((2 * i, i), (2 * i + 1, i + half)):  # interleaved dim → its half-split slot
            links_x += [src, dst, None]
            links_y += [0.5, 1.5, None]
    links = {
        "type": "scatter",
        "x": links_x,
        "y": links_y,
        "mode": "lines",
        "line": {"color": VERMILION, "width": 1.5},
        "name": t("rope.pair_links", lang),
        "hoverinfo": "skip",
    }
    return figure(
        [trace, links],
        title=t("rope.fig_pairs", lang, dim=dim),
        x=t("rope.axis_dim", lang),
        y=axis("pairing", lang),
        height=300,
        yaxis={
            "autorange": "reversed",
            "tickvals": [0, 2],
            "showgrid": False,
            "zeroline": False,
            "ticktext": [t("rope.pairing.interleaved", lang), t("rope.pairing.half", lang)],
        },
        xaxis={"showgrid": False, "zeroline": False},
        legend=legend_below(),
    )


def mismatch_curve(
    offsets: np.ndarray, right: np.ndarray, wrong: np.ndarray, lookback: int, *, trained: str, other: str, lang: str
) -> go.Figure:
    r"""A head trained (with pairing ``trained``) to look ``lookback`` tokens back, scored with each pairing."""
    traces = [
        {
            "type": "scatter",
            "x": offsets,
            "y": right,
            "mode": "lines",
            "line": {"color": GREEN, "width": 2.5},
            "name": t("rope.run_with", lang, pairing=t(f"rope.pairing.{trained}", lang)),
        },
        {
            "type": "scatter",
            "x": offsets,
            "y": wrong,
            "mode": "lines",
            "line": {"color": VERMILION, "width": 1.5},
            "name": t("rope.run_with", lang, pairing=t(f"rope.pairing.{other}", lang)),
        },
    ]
    marker = {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": -lookback,
        "x1": -lookback,
        "y0": 0,
        "y1": 1,
        "line": {"color": GREY, "dash": "dot", "width": 1},
    }
    note = {
        "xref": "x",
        "yref": "paper",
        "x": -lookback,
        "y": 1.0,
        "yanchor": "bottom",
        "showarrow": False,
        "text": f"r = −{lookback}",
        "font": {"color": GREY},
    }
    return figure(
        traces,
        title=t("rope.fig_mismatch", lang, pairing=t(f"rope.pairing.{trained}", lang), lookback=lookback),
        x=t("rope.axis_relative", lang),
        y=t("rope.axis_score", lang),
        height=420,
        shapes=[marker],
        annotations=[note],
        legend=legend_below(),
    )


def score_matrix(scores: np.ndarray, *, title: str, lang: str) -> go.Figure:
    r"""An (L, L) score matrix, queries down, keys across, on a colour scale symmetric about 0."""
    limit = float(np.max(np.abs(scores))) or 1.0
    positions = np.arange(scores.shape[0])
    hover = "m = %{y}, n = %{x}<br>%{z:.3f}"
    trace = heatmap_trace(
        scores, x=positions, y=positions, colorscale=DIVERGING, zmid=0.0, zmin=-limit, zmax=limit, hover=hover
    )
    return figure(
        [trace],
        title=title,
        x=t("rope.axis_key", lang),
        y=t("rope.axis_query", lang),
        height=420,
        yaxis={"autorange": "reversed"},
    )


# --- long-range decay ----------------------------------------------------------------------------------------------


def decay(
    distances: np.ndarray, bound: np.ndarray, all_ones: np.ndarray, marks: Mapping[int, float], *, lang: str
) -> go.Figure:
    r"""Su's bound and the all-ones score against distance on a log axis, with ``marks`` {r: bound(r)} labelled."""
    traces = [
        {
            "type": "scatter",
            "x": distances,
            "y": all_ones,
            "mode": "lines",
            "line": {"color": GREY, "width": 1},
            "name": t("rope.all_ones", lang),
            "hovertemplate": "r = %{x:,.0f}: %{y:.2f}<extra></extra>",
        },
        {
            "type": "scatter",
            "x": distances,
            "y": bound,
            "mode": "lines",
            "line": {"color": GREEN, "width": 2.5},
            "name": t("rope.bound", lang),
            "hovertemplate": "r = %{x:,.0f}: %{y:.2f}<extra></extra>",
        },
    ]
    # r = 0 cannot sit on a log axis: its value is written at the left edge; annotations take log10(x) there
    shown = [(r, value) for r, value in marks.items() if r > 0]
    arrows = [
        {
            "x": math.log10(r),
            "y": value,
            "text": f"r = {r}: {value:.2f}",
            "showarrow": True,
            "arrowhead": 0,
            "ax": 44 * (2 * j - 1),
            "ay": -34 - 16 * j,
            "bgcolor": translucent(WHITE, 0.9),
            "font": {"color": VERMILION},
        }
        for j, (r, value) in enumerate(shown)
    ]
    traces.append(
        {
            "type": "scatter",
            "x": [r for r, _ in shown],
            "y": [value for _, value in shown],
            "mode": "markers",
            "marker": {"color": VERMILION, "size": 9},
            "showlegend": False,
            "hoverinfo": "skip",
        }
    )
    if 0 in marks:
        arrows.append(
            {
                "xref": "paper",
                "x": 0,
                "y": marks[0],
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
                "text": f"r = 0: {marks[0]:.2f}",
                "font": {"color": VERMILION},
            }
        )
    return figure(
        traces,
        title=t("rope.fig_decay", lang),
        x=t("rope.axis_distance", lang),
        y=t("rope.axis_score", lang),
        height=420,
        xaxis=LOG_AXIS,
        annotations=arrows,
        legend=legend_below(),
    )


def random_band(
    distances: np.ndarray, mean: np.ndarray, std: np.ndarray, expected: np.ndarray, *, same_vector: bool, lang: str
) -> go.Figure:
    r"""Mean ± one standard deviation of :math:`q^\top R_r k` over random vectors, with the mean that theory
    predicts (0 for independent q, k; :math:`2\sum_i\cos r\theta_i` for k = q) dashed."""
    band_x = np.concatenate([distances, distances[::-1]])
    band_y = np.concatenate([mean + std, (mean - std)[::-1]])
    traces = [
        {
            "type": "scatter",
            "x": band_x,
            "y": band_y,
            "fill": "toself",
            "fillcolor": translucent(BLUE, BAND_ALPHA),
            "line": {"width": 0},
            "name": t("rope.band", lang),
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "x": distances,
            "y": mean,
            "mode": "lines",
            "line": {"color": BLUE, "width": 2},
            "name": t("rope.mean", lang),
            "hovertemplate": "r = %{x:,.0f}: %{y:.2f}<extra></extra>",
        },
        {
            "type": "scatter",
            "x": distances,
            "y": expected,
            "mode": "lines",
            "line": {"color": THEORY, "width": 1.2, "dash": "dash"},
            "name": t("rope.expected", lang),
            "hoverinfo": "skip",
        },
    ]
    key = "rope.fig_random_same" if same_vector else "rope.fig_random"
    return figure(
        traces,
        title=t(key, lang),
        x=t("rope.axis_distance", lang),
        y=t("rope.axis_score", lang),
        height=420,
        xaxis=LOG_AXIS,
        legend=legend_below(),
    )


# --- periods and repeats -------------------------------------------------------------------------------------------


def _unless_same(printed: float, true: float | None) -> str:
    r"""A printed value's label, blank when it rounds to the true value (whose diamond already says it)."""
    label = f"{printed:,.2f}"
    return "" if true is not None and label == f"{true:,.2f}" else label


def periods(
    pair_index: np.ndarray,
    wavelengths: np.ndarray,
    dim: int,
    syllabus: Mapping[int, float],
    printed: Mapping[int, float],
    syllabus_dim: int,
    *,
    lang: str,
) -> go.Figure:
    r""":math:`T_i = 2\pi\,\text{base}^{2i/d}` against 2i/d on a log axis, with the d = 512 example of
    the article 「从零学习大模型--旋转位置编码」: the true values (``syllabus``, {i: T_i}) and the values it prints
    (``printed``)."""
    fraction = 2 * pair_index / dim
    every = [*wavelengths, *syllabus.values(), *printed.values()]
    low, high = min(every), max(every)
    many = pair_index.shape[0] > 64
    traces = [
        {
            "type": "scatter",
            "x": fraction,
            "y": wavelengths,
            "mode": "lines" if many else "lines+markers",
            "line": {"color": GREEN, "width": 2},
            "marker": {"size": 5},
            "customdata": pair_index,
            "name": t("rope.periods_now", lang),
            "hovertemplate": "i = %{customdata}: T = %{y:,.2f}<extra></extra>",
        },
        {
            "type": "scatter",
            "x": [2 * i / syllabus_dim for i in syllabus],
            "y": list(syllabus.values()),
            "mode": "markers+text",
            "marker": {"color": THEORY, "size": 10, "symbol": "diamond"},
            "text": [f"T<sub>{i}</sub> = {v:,.2f}" for i, v in syllabus.items()],
            "textposition": ["middle right", "top left", "top left"][: len(syllabus)],
            "name": t("rope.periods_true", lang),
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "x": [2 * i / syllabus_dim for i in printed],
            "y": list(printed.values()),
            "mode": "markers+text",
            "marker": {"color": VERMILION, "size": 11, "symbol": "x"},
            # A printed value equal to the true one is labelled once, by the diamond (two labels on one point).
            "text": [_unless_same(v, syllabus.get(i)) for i, v in printed.items()],
            "textposition": ["bottom right", "bottom right", "bottom left"][: len(printed)],
            "name": t("rope.periods_printed", lang),
            "hoverinfo": "skip",
        },
    ]
    return figure(
        traces,
        title=t("rope.fig_periods", lang),
        x=t("rope.axis_fraction", lang),
        y=t("rope.axis_period", lang),
        height=440,
        xaxis={"range": [-0.05, 1.08]},
        yaxis={**LOG_AXIS, "range": [math.log10(low) - 0.3, math.log10(high) + 0.45]},  # room for the labels
        legend=legend_below(),
    )


def near_repeats(first: Sequence[int | None], max_distance: int, tolerance_deg: int, *, lang: str) -> go.Figure:
    r"""First near repeat of the first k pairs, k = 1, 2, …, on a log axis; where none comes within
    ``max_distance`` (None) a grey bar reaches the top, under one note saying so."""
    k = np.arange(1, len(first) + 1)
    found = np.array([r is not None for r in first])
    heights = np.array([r if r is not None else max_distance for r in first], dtype=np.float64)
    bar = {
        "type": "bar",
        "x": k,
        "y": heights,
        "marker": {"color": np.where(found, GREEN, NOT_FOUND).tolist()},
        "text": [f"{r:,}" if r is not None else "" for r in first],
        "textposition": "outside",
        "cliponaxis": False,
        "customdata": [f"{r:,}" if r is not None else f"> {max_distance:,}" for r in first],
        "showlegend": False,
        "hovertemplate": t("rope.repeat_hover", lang) + "<extra></extra>",
    }
    top = math.log10(max_distance)
    notes = []
    if not found.all():  # log axis: annotations take log10(y)
        notes.append(
            {
                "x": float(np.mean(k[~found])),
                "y": top,
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"color": GREY},
                "text": t("rope.none_within", lang, reach=f"10<sup>{top:.0f}</sup>"),
            }
        )
    return figure(
        [bar],
        title=t("rope.fig_repeats", lang, tolerance=tolerance_deg),
        x=t("rope.axis_pairs_used", lang),
        y=t("rope.axis_repeat", lang),
        height=440,
        xaxis={"dtick": 1},
        yaxis={**LOG_AXIS, "range": [0, top + 0.6]},
        annotations=notes,
    )
