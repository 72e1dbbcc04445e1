r"""Figures of page 7 (context extension): wavelengths before / after, regimes, YaRN's ramp two ways, temperature,
angle coverage as arcs, and real models side by side. Pure builders: arrays in, ``go.Figure`` out."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import plotly.graph_objects as go

from ...figures.style import (
    BLUE,
    GREEN,
    GREY,
    ORANGE,
    PALETTE,
    PURPLE,
    SEEN_IN_TRAINING,
    VERMILION,
    axis,
    figure,
    legend_below,
)
from ...i18n import t

#: kept / blended / interpolated (the codes of posenc_core.rope_scaling.REGIMES).
REGIME_COLOURS = (BLUE, ORANGE, VERMILION)
REGIME_KEYS = ("kept", "blended", "interpolated")
BEFORE_COLOUR, AFTER_COLOUR, UNSEEN_COLOUR = GREY, GREEN, VERMILION


def _hline(y: float, label: str, *, dash: str = "dot", colour: str = GREY, right: bool = False) -> dict:
    r"""A labelled horizontal line at ``y`` on a log y axis (shape by value, label by log10 value)."""
    paper, yref = "paper", "y"
    return {  # the label sits above the line, at the left end (or the right one)
        "shape": {
            "type": "line",
            "xref": paper,
            "x0": 0,
            "x1": 1,
            "yref": yref,
            "y0": y,
            "y1": y,
            "line": {"color": colour, "dash": dash, "width": 1.5},
        },
        "annotation": {
            "xref": paper,
            "x": 1.0 if right else 0.0,
            "xanchor": "right" if right else "left",
            "yref": yref,
            "y": math.log10(y),
            "yanchor": "bottom",
            "text": label,
            "showarrow": False,
            "font": {"color": colour},
        },
    }


def _lines(*lines: dict) -> dict[str, list[dict]]:
    return {"shapes": [line["shape"] for line in lines], "annotations": [line["annotation"] for line in lines]}


class Curve(NamedTuple):
    r"""One line of a wavelength chart: :math:`\lambda_i` per pair, its legend name, colour, dash (plotly's solid line
    when None) and marker size."""

    values: np.ndarray
    name: str
    colour: str
    dash: str | None = None
    size: int = 4


def wavelength_chart(
    curves: Sequence[Curve], *, length: int, target: int | None = None, title: str, lang: str, **layout: Any
) -> go.Figure:
    r"""The wavelength :math:`\lambda_i` (log) of every pair, one line per curve, with the training length L (and a
    target T other than L) as labelled lines: the one chart behind a method's before / after and a model's kinds of
    layer (:mod:`.figures_layers`). ``layout`` goes to :func:`~posenc_ui.figures.style.figure` as it is."""
    hover = f"{axis('pair', lang)} %{{x}}<br>λ = %{{y:,.4g}}<extra>%{{fullData.name}}</extra>"
    traces = [
        {
            "type": "scatter",
            "x": np.arange(curve.values.shape[0]),
            "y": curve.values,
            "mode": "lines+markers",
            "name": curve.name,
            "line": {"color": curve.colour} | ({"dash": curve.dash} if curve.dash else {}),
            "marker": {"size": curve.size},
            "hovertemplate": hover,
        }
        for curve in curves
    ]
    lines = [_hline(length, t("extension.line_train", lang, length=f"{length:,}"), colour=BLUE)]
    if target is not None and target != length:
        lines.append(_hline(target, t("extension.line_target", lang, length=f"{target:,}"), colour=VERMILION))
    return figure(
        traces,
        title=title,
        x=axis("pair", lang),
        y=t("extension.axis_wavelength", lang),
        yaxis={"type": "log", "exponentformat": "power"},
        **layout,
        **_lines(*lines),
    )


def wavelengths(
    before: np.ndarray,
    after: np.ndarray | None,
    *,
    length: int,
    target: int | None,
    title: str,
    after_name: str,
    lang: str,
) -> go.Figure:
    r"""The master chart: :math:`\lambda_i` (log) per pair before and after a method, L (and the target T) as lines."""
    curves = [Curve(before, t("extension.before", lang), BEFORE_COLOUR, dash="dash")]
    if after is not None:
        curves.append(Curve(after, after_name, AFTER_COLOUR, size=5))
    return wavelength_chart(curves, length=length, target=target, title=title, lang=lang)


def regimes(
    turns: np.ndarray, regime: np.ndarray, *, beta_fast: float, beta_slow: float, title: str, lang: str
) -> go.Figure:
    r"""Bars of :math:`r_i = L/\lambda_i` (log) per pair, coloured kept / blended / interpolated, β thresholds drawn."""
    pairs = np.arange(turns.shape[0])
    traces = []
    for code, (key, colour) in enumerate(zip(REGIME_KEYS, REGIME_COLOURS, strict=True)):
        chosen = regime == code
        traces.append(
            {
                "type": "bar",
                "x": pairs[chosen],
                "y": turns[chosen],
                "marker": {"color": colour},
                "name": f"{t(f'extension.regime.{key}', lang)} ({int(chosen.sum())})",
                "hovertemplate": f"{axis('pair', lang)} %{{x}}<br>r = %{{y:.4g}}<extra>%{{fullData.name}}</extra>",
            }
        )
    lines = _lines(
        _hline(beta_fast, f"β = beta_fast = {beta_fast:g}", colour=GREY, dash="dash", right=True),
        _hline(beta_slow, f"α = beta_slow = {beta_slow:g}", colour=GREY, dash="dash", right=True),
    )
    return figure(
        traces,
        title=title,
        x=axis("pair", lang),
        y=t("extension.axis_turns", lang),
        yaxis={"type": "log", "exponentformat": "power"},
        bargap=0.1,
        legend=legend_below(),
        height=440,
        **lines,
    )


def _ramp_traces(
    ramp: np.ndarray, turns: np.ndarray, paper_turns: np.ndarray, paper_ramp: np.ndarray, *, lang: str
) -> list[dict]:
    r"""The code's ramp against the pair index (left panel), and against turns next to the paper's γ (right panel)."""
    return [
        {
            "type": "scatter",
            "x": np.arange(ramp.shape[0]),
            "y": ramp,
            "mode": "lines+markers",
            "line": {"color": ORANGE},
            "marker": {"size": 4},
            "name": t("extension.ramp_code", lang),
            "hovertemplate": f"{axis('pair', lang)} %{{x}}<br>%{{y:.3f}}<extra></extra>",
        },
        {
            "type": "scatter",
            "x": turns,
            "y": ramp,
            "mode": "markers",
            "marker": {"size": 6, "color": ORANGE},
            "name": t("extension.ramp_code", lang),
            "showlegend": False,
            "xaxis": "x2",
            "yaxis": "y2",
            "hovertemplate": "r = %{x:.3g}<br>%{y:.3f}<extra></extra>",
        },
        {
            "type": "scatter",
            "x": paper_turns,
            "y": paper_ramp,
            "mode": "lines",
            "line": {"color": PURPLE},
            "name": t("extension.ramp_paper", lang),
            "xaxis": "x2",
            "yaxis": "y2",
            "hovertemplate": "r = %{x:.3g}<br>1 − γ(r) = %{y:.3f}<extra></extra>",
        },
    ]


def _vline(x: float, *, xref: str = "x", yref: str = "y domain") -> dict:
    r"""A dotted grey vertical line at ``x``, across the whole plot."""
    return {
        "type": "line",
        "xref": xref,
        "yref": yref,
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "line": {"color": GREY, "dash": "dot", "width": 1},
    }


def ramp_two_ways(
    ramp: np.ndarray,
    turns: np.ndarray,
    paper_turns: np.ndarray,
    paper_ramp: np.ndarray,
    *,
    low: float,
    high: float,
    lang: str,
) -> go.Figure:
    r"""YaRN's interpolation weight: left in the pair index (what code computes, between rounded low and high),
    right against turns r on a log axis (the paper's γ, linear in r, next to the code's points)."""
    return figure(
        _ramp_traces(ramp, turns, paper_turns, paper_ramp, lang=lang),
        title=t("extension.fig_ramp", lang, low=f"{low:g}", high=f"{high:g}"),
        xaxis={"domain": [0.0, 0.46], "title": {"text": axis("pair", lang)}},
        yaxis={"title": {"text": t("extension.axis_ramp", lang)}, "range": [-0.05, 1.05]},
        xaxis2={
            "domain": [0.56, 1.0],
            "type": "log",
            "title": {"text": t("extension.axis_turns", lang)},
            "anchor": "y2",
            "exponentformat": "power",
        },
        yaxis2={"anchor": "x2", "range": [-0.05, 1.05]},
        shapes=[_vline(edge) for edge in (low, high)],
        legend=legend_below(),
        height=440,
    )


def temperature(factors: np.ndarray, curves: Mapping[str, np.ndarray], *, current: float, lang: str) -> go.Figure:
    r"""Each method's attention temperature against the extension factor s (log x), the chosen s marked."""
    colours = {"yarn": GREEN, "deepseek_rope": PURPLE, "deepseek_softmax": PURPLE, "longrope": ORANGE}
    dashes = {"deepseek_softmax": "dot", "deepseek_rope": "dash"}
    traces = [
        {
            "type": "scatter",
            "x": factors,
            "y": values,
            "mode": "lines",
            "name": t(f"extension.temp.{name}", lang),
            "line": {"color": colours[name], "dash": dashes.get(name, "solid"), "width": 2.5},
            "hovertemplate": "s = %{x:.3g}<br>%{y:.4f}<extra>%{fullData.name}</extra>",
        }
        for name, values in curves.items()
    ]
    marker = _vline(current, yref="paper")
    return figure(
        traces,
        title=t("extension.fig_temperature", lang, factor=f"{current:g}"),
        x=t("extension.axis_factor", lang),
        y=t("extension.axis_temperature", lang),
        xaxis={"type": "log"},
        shapes=[marker],
        legend=legend_below(),
        height=440,
    )


def _arc_traces(inner: np.ndarray, outer: np.ndarray, *, colour: str, name: str, polar: str, show: bool) -> dict:
    r"""One barpolar trace: for ring i the arc from ``inner[i]`` to ``outer[i]`` radians (counter-clockwise from 0)."""
    width = np.degrees(outer - inner)
    return {
        "type": "barpolar",
        "r": np.ones_like(inner),
        "base": list(range(inner.shape[0])),  # a list, as plotly.py sends `base` (its validator keeps no typed array)
        "theta": np.degrees(inner) + width / 2,
        "width": width,
        "marker": {"color": colour, "line": {"width": 0.8, "color": colour}},  # its own colour: no seams, no moiré
        "name": name,
        "subplot": polar,
        "showlegend": show,
        "legendgroup": name,
        "customdata": np.arange(inner.shape[0]),
        "hovertemplate": f"i = %{{customdata}}<extra>{name}</extra>",
    }


def _coverage_arcs(seen: np.ndarray, covered: np.ndarray, *, polar: str, legend: bool, lang: str) -> list[dict]:
    r"""One panel's three arcs per ring: what training saw (grey), what the test reuses of it, what is new."""
    reused = np.minimum(covered, seen)
    return [
        _arc_traces(
            np.zeros_like(seen),
            seen,
            colour=SEEN_IN_TRAINING,
            name=t("extension.arc_seen", lang),
            polar=polar,
            show=legend,
        ),
        _arc_traces(
            np.zeros_like(reused),
            reused,
            colour=AFTER_COLOUR,
            name=t("extension.arc_reused", lang),
            polar=polar,
            show=legend,
        ),
        _arc_traces(
            seen,
            np.maximum(covered, seen),
            colour=UNSEEN_COLOUR,
            name=t("extension.arc_unseen", lang),
            polar=polar,
            show=legend,
        ),
    ]


def _polar_panel(left: float, width: float, rings: int) -> dict:
    r"""A polar subplot from ``left`` across ``width`` (paper units), one ring per pair, 0° to the right."""
    return {
        "domain": {"x": [left, left + width], "y": [0.0, 0.8]},
        "barmode": "overlay",
        "hole": 0.05,
        "radialaxis": {"visible": False, "range": [0, rings]},
        "angularaxis": {"direction": "counterclockwise", "rotation": 0, "tickfont": {"size": 12}, "dtick": 90},
        "bargap": 0.0,  # solid rings: thin gaps between 64 rings drew a moiré
    }


def angle_rings(
    seen: np.ndarray,
    panels: Sequence[tuple[str, np.ndarray]],
    *,
    title: str,
    lang: str,
) -> go.Figure:
    r"""Angle coverage per pair as arcs on concentric rings (pair 0 innermost), one polar panel per entry of
    ``panels`` = (panel title, test coverage): grey what training saw, green what the test reuses, red what is new.

    Coverages are radians in [0, 2π] per pair (:func:`posenc_core.angle_coverage`).
    """
    traces, annotations, layout = [], [], {}
    gap = 0.2  # room for the right panel's "180°" between the two circles on a phone
    width = (1.0 - gap * (len(panels) - 1)) / len(panels)
    for n, (panel_title, covered) in enumerate(panels):
        polar = "polar" if n == 0 else f"polar{n + 1}"
        traces += _coverage_arcs(seen, covered, polar=polar, legend=n == 0, lang=lang)
        left = n * (width + gap)
        layout[polar] = _polar_panel(left, width, seen.shape[0])
        annotations.append(
            {
                "xref": "paper",
                "yref": "paper",
                "x": left + width / 2,
                "y": 0.97,
                "xanchor": "center",
                "text": panel_title,
                "showarrow": False,
                "font": {"size": 12},
            }
        )
    return figure(
        traces,
        title=title,
        annotations=annotations,
        height=460,
        margin={"l": 40, "r": 40, "t": 96, "b": 24},  # the "180°" and "0°" labels stand outside the circles
        legend=legend_below(),
        **layout,
    )


def model_wavelengths(
    curves: Mapping[str, np.ndarray], lengths: Mapping[str, int], *, left_out: Sequence[str] = (), lang: str
) -> go.Figure:
    r"""Published frequencies of several models on one chart: :math:`\lambda_i` (log) against 2i/d, a marker at the
    first pair whose wavelength exceeds the model's training length; ``left_out`` names models not drawn (the title
    says so). Past the palette's seven colours, lines are dashed, then dotted."""
    traces = []
    for n, (name, wavelength) in enumerate(curves.items()):
        x = 2.0 * np.arange(wavelength.shape[0]) / (2 * wavelength.shape[0])
        colour = PALETTE[n % len(PALETTE)]
        traces.append(
            {
                "type": "scatter",
                "x": x,
                "y": wavelength,
                "mode": "lines",
                "name": name,
                "legendgroup": name,
                "line": {"color": colour, "width": 2, "dash": ("solid", "dash", "dot")[n // len(PALETTE) % 3]},
                "hovertemplate": f"{name}<br>2i/d = %{{x:.2f}}<br>λ = %{{y:,.4g}}<extra></extra>",
            }
        )
        beyond = np.flatnonzero(wavelength > lengths[name])
        if beyond.size:
            i = int(beyond[0])
            traces.append(
                {
                    "type": "scatter",
                    "x": [x[i]],
                    "y": [wavelength[i]],
                    "mode": "markers",
                    "legendgroup": name,
                    "marker": {"color": colour, "size": 9, "symbol": "diamond"},
                    "showlegend": False,
                    "hovertemplate": t("extension.first_long", lang, model=name, pair=i, length=f"{lengths[name]:,}")
                    + "<extra></extra>",
                }
            )
    return figure(
        traces,
        title=t("extension.fig_models", lang)
        + (t("extension.fig_models_left_out", lang, models=", ".join(left_out)) if left_out else ""),
        x=t("extension.axis_pair_fraction", lang),
        y=t("extension.axis_wavelength", lang),
        yaxis={"type": "log", "exponentformat": "power"},
        legend=legend_below(),
        height=480,
    )
