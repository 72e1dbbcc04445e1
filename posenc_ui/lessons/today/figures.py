r"""Figures of page 9 (position in today's models): what each kind of layer sees, NoPE's probe, p-RoPE against
partial RoPE, M-RoPE's position ids, axes and scores, and MLA's fold and cache.

Pure builders: arrays and words in, ``go.Figure`` out; no core call here. The layer strip is page 7's
(:func:`posenc_ui.lessons.extension.figures_layers.layer_strip`), not drawn again here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ...figures.style import (
    BAND_ALPHA,
    BLUE,
    GREEN,
    GREY,
    ORANGE,
    PURPLE,
    SEQUENTIAL,
    THEORY,
    VERMILION,
    axis,
    figure,
    fit_height,
    legend_below,
    translucent,
)
from ...i18n import t

#: One colour per M-RoPE axis (t, h, w), on every figure of the page that names an axis.
AXIS_COLOURS = (VERMILION, BLUE, GREEN)
MASKED, UNMASKED = BLUE, ORANGE  # the causal probe and the one without the mask
SEGMENT_COLOURS = {"text": GREY, "image": PURPLE, "video": ORANGE}


def reach(
    names: Sequence[str],
    spans: Sequence[int],
    shortest: Sequence[float],
    longest: Sequence[float],
    colours: Sequence[str],
    *,
    title: str,
    lang: str,
) -> go.Figure:
    r"""One row per kind of layer (log x, tokens): a thick band from 1 to the keys it sees, and a line over the range
    of its wavelengths (none for a kind that does not rotate)."""
    traces: list[dict] = []
    view_name, wave_name = t("today.reach_view", lang), t("today.reach_waves", lang)
    for row, (name, span, low, high, colour) in enumerate(zip(names, spans, shortest, longest, colours, strict=True)):
        traces.append(
            {
                "type": "scatter",
                "x": [1, span],
                "y": [row, row],
                "mode": "lines",
                "line": {"color": translucent(colour, 0.35), "width": 16},
                "name": view_name,
                "legendgroup": "view",
                "showlegend": row == 0,
                "hovertemplate": f"{name}<br>{view_name}: %{{x:,}}<extra></extra>",
            }
        )
        if high > 0:
            traces.append(
                {
                    "type": "scatter",
                    "x": [low, high],
                    "y": [row, row],
                    "mode": "lines+markers",
                    "line": {"color": colour, "width": 3},
                    "marker": {"size": 9, "symbol": "line-ns-open", "line": {"width": 3, "color": colour}},
                    "name": wave_name,
                    "legendgroup": "waves",
                    "showlegend": not any(tr.get("legendgroup") == "waves" for tr in traces),
                    "hovertemplate": f"{name}<br>λ = %{{x:,.4g}}<extra></extra>",
                }
            )
    return figure(
        traces,
        title=title,
        x=t("today.axis_tokens", lang),
        y=axis("layer_kind", lang),
        height=150 + 60 * len(names),
        xaxis={"type": "log", "exponentformat": "power"},
        yaxis={
            "tickvals": list(range(len(names))),
            "ticktext": [t("today.kind_short", lang, index=k + 1) for k in range(len(names))],
            "range": [len(names) - 0.5, -0.5],
            "fixedrange": True,
        },
        legend=legend_below(),
        showlegend=True,
    )


def _band(x: np.ndarray, low: np.ndarray, high: np.ndarray, colour: str, group: str) -> list[dict]:
    edge = {"color": translucent(colour, 0.0), "width": 0}
    return [
        {
            "type": "scatter",
            "x": x,
            "y": high,
            "mode": "lines",
            "line": edge,
            "legendgroup": group,
            "showlegend": False,
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "x": x,
            "y": low,
            "mode": "lines",
            "line": edge,
            "fill": "tonexty",
            "fillcolor": translucent(colour, BAND_ALPHA),
            "legendgroup": group,
            "showlegend": False,
            "hoverinfo": "skip",
        },
    ]


def probe(
    positions: np.ndarray,
    masked: tuple[np.ndarray, np.ndarray, np.ndarray],
    unmasked: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    names: tuple[str, str],
    title: str,
    lang: str,
) -> go.Figure:
    r"""What the probe reads (median and 10–90 % band over held-out sequences, log–log) against the true position,
    with and without the causal mask; the diagonal is a perfect reading."""
    traces: list[dict] = [
        {
            "type": "scatter",
            "x": positions,
            "y": positions,
            "mode": "lines",
            "line": {"color": THEORY, "dash": "dot", "width": 1},
            "name": t("today.perfect", lang),
            "hoverinfo": "skip",
        }
    ]
    for (median, low, high), name, colour, group in (
        (masked, names[0], MASKED, "masked"),
        (unmasked, names[1], UNMASKED, "unmasked"),
    ):
        traces += _band(positions, low, high, colour, group)
        traces.append(
            {
                "type": "scatter",
                "x": positions,
                "y": median,
                "mode": "lines",
                "line": {"color": colour, "width": 2},
                "name": name,
                "legendgroup": group,
                "hovertemplate": "t = %{x}<br>t̂ = %{y:,.1f}<extra></extra>",
            }
        )
    return figure(
        traces,
        title=title,
        x=t("today.axis_t", lang),
        y=t("today.axis_read", lang),
        xaxis={"type": "log"},
        yaxis={"type": "log"},
        legend=legend_below(),
        showlegend=True,
    )


def norm(
    positions: np.ndarray, masked: np.ndarray, unmasked: np.ndarray, *, names: tuple[str, str], title: str, lang: str
) -> go.Figure:
    r"""The mean of :math:`\lVert y_t\rVert^2/d` over the sequences against t (log–log), with and without the mask,
    and the 1/t the mask predicts."""
    traces = [
        {
            "type": "scatter",
            "x": positions,
            "y": 1.0 / positions,
            "mode": "lines",
            "line": {"color": THEORY, "dash": "dot", "width": 1},
            "name": t("today.one_over_t", lang),
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "x": positions,
            "y": masked,
            "mode": "lines",
            "line": {"color": MASKED, "width": 2},
            "name": names[0],
        },
        {
            "type": "scatter",
            "x": positions,
            "y": unmasked,
            "mode": "lines",
            "line": {"color": UNMASKED, "width": 2},
            "name": names[1],
        },
    ]
    return figure(
        traces,
        title=title,
        x=t("today.axis_t", lang),
        y=t("today.axis_norm", lang),
        xaxis={"type": "log"},
        yaxis={"type": "log", "exponentformat": "power"},
        legend=legend_below(),
        showlegend=True,
    )


def _clear_stretch(curves: Sequence[np.ndarray], *, low: float, high: float) -> float:
    r"""The middle of the longest run of pair indices at which no curve, nor the segment it draws to a neighbour,
    passes through [low, high] (NaN and a curve that has ended are clear): where a label in that band covers no
    line."""
    width = max(values.shape[0] for values in curves)
    blocked = np.zeros(width, dtype=bool)
    with np.errstate(invalid="ignore"):
        for values in curves:
            a, b = values[:-1], values[1:]
            segment = (np.fmin(a, b) <= high) & (np.fmax(a, b) >= low) & ~np.isnan(a) & ~np.isnan(b)
            blocked[: values.shape[0]] |= (values >= low) & (values <= high)
            blocked[: values.shape[0] - 1] |= segment
            blocked[1 : values.shape[0]] |= segment
    best, start = (0, 0), 0
    for index, stop in enumerate([*blocked, True]):
        if stop:
            if index - start > best[1] - best[0]:
                best = (start, index)
            start = index + 1
    return (best[0] + best[1] - 1) / 2 if best[1] > best[0] else (width - 1) / 2


def wavelength_lines(
    curves: Sequence[np.ndarray],
    names: Sequence[str],
    colours: Sequence[str],
    *,
    context: int,
    title: str,
    lang: str,
) -> go.Figure:
    r"""Wavelength (log) per pair index of the head, one line per way of rotating it (NaN: a pair that does not
    turn), and the model's context length as a line."""
    traces = [
        {
            "type": "scatter",
            "x": np.arange(values.shape[0]),
            "y": values,
            "mode": "lines+markers",
            "marker": {"size": 3},
            "line": {"color": colour, "width": 2 if k else 1.5, "dash": "dot" if k == 0 else "solid"},
            "name": name,
            "hovertemplate": f"{axis('pair', lang)} %{{x}}<br>λ = %{{y:,.4g}}<extra>%{{fullData.name}}</extra>",
        }
        for k, (values, name, colour) in enumerate(zip(curves, names, colours, strict=True))
    ]
    line = {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "y0": context,
        "y1": context,
        "line": {"color": GREY, "dash": "dash", "width": 1},
    }
    label = {  # just above the line, in the widest stretch of pairs where no curve passes through the text
        "x": _clear_stretch(curves, low=context, high=10.0 * context),
        "xanchor": "center",
        "y": float(np.log10(context)),
        "yanchor": "bottom",
        "text": t("today.line_context", lang, length=f"{context:,}"),
        "showarrow": False,
        "font": {"color": GREY},
    }
    return figure(
        traces,
        title=title,
        x=axis("pair", lang),
        y=t("today.axis_wavelength", lang),
        yaxis={"type": "log", "exponentformat": "power"},
        shapes=[line],
        annotations=[label],
        legend=legend_below(),
        showlegend=True,
    )


def position_ids(
    ids: np.ndarray, kinds: Sequence[str], bounds: Sequence[tuple[int, int]], *, title: str, lang: str
) -> go.Figure:
    r"""The (t, h, w) position ids of every token (x: token index), one line each, over shaded segments (text, image,
    video)."""
    tokens = np.arange(ids.shape[1])
    traces = [
        {
            "type": "scatter",
            "x": tokens,
            "y": ids[axis_index],
            "mode": "lines+markers",
            "marker": {"size": 4},
            "line": {"color": AXIS_COLOURS[axis_index], "width": 1.5, "shape": "hv"},
            "name": t(f"today.axis_name.{name}", lang),
        }
        for axis_index, name in enumerate(("t", "h", "w"))
    ]
    shapes = [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": start - 0.5,
            "x1": stop - 0.5,
            "y0": 0,
            "y1": 1,
            "fillcolor": translucent(SEGMENT_COLOURS[kind], 0.12),
            "line": {"width": 0},
            "layer": "below",
        }
        for kind, (start, stop) in zip(kinds, bounds, strict=True)
    ]
    labels = [
        {
            "xref": "x",
            "yref": "paper",
            "x": (start + stop - 1) / 2,
            "y": 1.0,
            "yanchor": "bottom",
            "text": t(f"today.segment.{kind}", lang),
            "showarrow": False,
            "font": {"color": SEGMENT_COLOURS[kind], "size": 11},
        }
        for kind, (start, stop) in zip(kinds, bounds, strict=True)
    ]
    return figure(
        traces,
        title=title,
        x=axis("token", lang),
        y=t("today.axis_id", lang),
        shapes=shapes,
        annotations=labels,
        legend=legend_below(),
        showlegend=True,
        margin={"t": 78},
    )


def pair_axes(rows: np.ndarray, row_names: Sequence[str], *, title: str, lang: str) -> go.Figure:
    r"""Which axis each pair reads (0 t, 1 h, 2 w), one row per layout, pair index along x (fast → slow)."""
    stops = []
    for k, colour in enumerate(AXIS_COLOURS):
        stops += [(k / 3, colour), ((k + 1) / 3, colour)]
    names = [t(f"today.axis_name.{name}", lang) for name in ("t", "h", "w")]
    hover = np.array([[names[int(a)] for a in row] for row in rows])
    trace = {
        "type": "heatmap",
        "z": rows.astype(np.float32),
        "x": np.arange(rows.shape[1]),
        "y": list(row_names),
        "zmin": -0.5,
        "zmax": 2.5,
        "colorscale": stops,
        "xgap": 1,
        "ygap": 4,
        "customdata": hover,
        "hovertemplate": f"%{{y}}<br>{axis('pair', lang)} %{{x}}: %{{customdata}}<extra></extra>",
        "showscale": False,
    }
    keys = [  # the axes' colours named in a legend: a colour bar's labels ran off a phone's edge
        {
            "type": "scatter",
            "x": [None],
            "y": [None],
            "mode": "markers",
            "marker": {"color": colour, "size": 10, "symbol": "square"},
            "name": name,
        }
        for name, colour in zip(names, AXIS_COLOURS, strict=True)
    ]
    return figure(
        [trace, *keys],
        title=title,
        x=t("today.axis_pair_speed", lang),
        y=axis("model", lang),
        height=280,
        yaxis={"autorange": "reversed", "fixedrange": True, "automargin": True},
        xaxis={"fixedrange": True},
        legend=legend_below(),
        showlegend=True,
    )


def axis_scores(offsets: np.ndarray, curves: np.ndarray, *, title: str, lang: str) -> go.Figure:
    r"""The all-ones M-RoPE score against an offset along one axis alone (the other two at 0): one line per axis."""
    traces = [
        {
            "type": "scatter",
            "x": offsets,
            "y": curves[k],
            "mode": "lines",
            "line": {"color": AXIS_COLOURS[k], "width": 1.5},
            "name": t("today.score_along", lang, axis=t(f"today.axis_name.{name}", lang)),
        }
        for k, name in enumerate(("t", "h", "w"))
    ]
    return figure(
        traces,
        title=title,
        x=t("today.axis_offset", lang),
        y=t("today.axis_score", lang),
        yaxis={"range": [-0.3, 1.05]},
        legend=legend_below(),
        showlegend=True,
    )


def score_grid(steps: np.ndarray, score: np.ndarray, *, title: str, lang: str) -> go.Figure:
    r"""The all-ones score over (Δh, Δw) at one Δt: rows Δh, columns Δw, its colours spread over the range it spans
    (a layout with slow spatial pairs stays near 1, and a fixed −1 … 1 scale drew it as one flat colour), drawn to
    scale (one patch is as wide as it is tall)."""
    trace = {
        "type": "heatmap",
        "x": steps,
        "y": steps,
        "z": score.astype(np.float32),
        "zmin": min(float(score.min()), 1.0 - 1e-6),
        "zmax": 1.0,
        "colorscale": SEQUENTIAL,
        "colorbar": {"title": {"text": t("today.axis_score", lang)}, "thickness": 12},
        "hovertemplate": "Δh = %{y}, Δw = %{x}<br>%{z:.3f}<extra></extra>",
    }
    return figure(
        [trace],
        title=title,
        x=t("today.axis_dw", lang),
        y=t("today.axis_dh", lang),
        height=420,
        xaxis={"constrain": "domain"},
        yaxis={"scaleanchor": "x", "autorange": "reversed", "constrain": "domain"},
        meta=fit_height(1.0, 1.0),
    )


def fold_bars(values: Sequence[float], names: Sequence[str], *, threshold: float, title: str, lang: str) -> go.Figure:
    r"""The three residuals of computing MLA's scores from the cache (log y), the 0.1 line between exact and O(1)."""
    colours = [GREEN, VERMILION, GREEN]
    trace = {
        "type": "bar",
        "x": list(names),
        "y": [max(v, 1e-18) for v in values],
        "marker": {"color": colours},
        "text": [f"{v:.1e}" for v in values],
        "textposition": "outside",
        "cliponaxis": False,
        "hovertemplate": "%{x}: %{y:.2e}<extra></extra>",
    }
    return figure(
        [trace],
        title=title,
        x=axis("design", lang),
        y=t("today.axis_fold", lang),
        yaxis={"type": "log", "exponentformat": "power", "range": [-17, 1]},
        shapes=[
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": threshold,
                "y1": threshold,
                "line": {"color": GREY, "dash": "dot", "width": 1},
            }
        ],
        showlegend=False,
    )


def cache_bars(
    labels: Sequence[str],
    parts: Sequence[tuple[str, Sequence[float], str]],
    *,
    totals: Sequence[str],
    title: str,
    lang: str,
) -> go.Figure:
    r"""Values cached per token per layer, stacked by part (latent, rotated key; keys, values), one bar per design,
    its total written above it (MLA's bar is too short to read otherwise) and, where a part is under 2% of the
    tallest bar (MLA's 64-value rotated key), the parts' values in their colours under the total."""
    traces = [
        {
            "type": "bar",
            "x": list(labels),
            "y": list(values),
            "name": name,
            "marker": {"color": colour},
            "hovertemplate": f"{name}: %{{y:,}}<extra>%{{x}}</extra>",
        }
        for name, values, colour in parts
    ]
    heights = [sum(values[k] for _, values, _ in parts) for k in range(len(labels))]
    notes = []
    for k, (label, height, total) in enumerate(zip(labels, heights, totals, strict=True)):
        shown = [(values[k], colour) for _, values, colour in parts if values[k] > 0]
        if min(value for value, _ in shown) < 0.02 * max(heights):  # a part too thin to see: its value, its colour
            total += "<br>= " + " + ".join(f"<span style='color:{c}'><b>{v:,.0f}</b></span>" for v, c in shown)
        notes.append({"x": label, "y": height, "text": total, "yanchor": "bottom", "showarrow": False})
    return figure(
        traces,
        title=title,
        x=axis("design", lang),
        y=t("today.axis_cache", lang),
        barmode="stack",
        annotations=notes,
        legend=legend_below() | {"traceorder": "normal"},  # the parts in stacking order, bottom first
        showlegend=True,
    )
