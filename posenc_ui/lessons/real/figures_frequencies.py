r"""Figures of the real-model page's sections 4 to 6: the size of each RoPE pair's query and key parts by layer,
the loss with the slowest or fastest pairs stopped, the loss under each rescaling, the loss with one layer made
NoPE, and the loss by position past the training length. Pure builders: arrays in, ``go.Figure`` out (the
measurements are :mod:`posenc_real.frequencies`, :mod:`posenc_real.rescale` and :mod:`posenc_real.beyond`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from posenc_real.beyond import BeyondRun

from ...figures.heatmap import heatmap_trace
from ...figures.style import (
    BAND_ALPHA,
    BLUE,
    GREEN,
    GREY,
    ORANGE,
    SEQUENTIAL,
    VERMILION,
    figure,
    legend_below,
    line_trace,
    reference_line,
    translucent,
    vertical_line,
)
from ...i18n import t

#: One colour per side of the frequency range, and per rescaling, in every figure of these sections.
SIDE_COLOURS = {"slowest": BLUE, "fastest": VERMILION}
METHOD_COLOURS = {"base": ORANGE, "linear": BLUE, "dynamic": GREY, "yarn": GREEN}


def wavelength_label(wavelength: float) -> str:
    r"""A pair's wavelength 2π/θ_i in tokens as a short label: 6.3, 78, 968, 8.4k, 438k."""
    if wavelength < 10:
        return f"{wavelength:.1f}"
    if wavelength < 1000:
        return f"{wavelength:.0f}"
    return f"{wavelength / 1000:.1f}k" if wavelength < 10_000 else f"{wavelength / 1000:.0f}k"


def pair_norms(relative: np.ndarray, wavelengths: np.ndarray, *, part: str, title: str, lang: str) -> go.Figure:
    r"""Heatmap layer (rows) × pair (columns, labelled by wavelength, fastest left): each pair's mean norm in the
    queries or keys (``part``) divided by its layer's mean over pairs, so 1 is the layer's average pair."""
    labels = np.asarray([wavelength_label(w) for w in wavelengths])
    layers = np.arange(relative.shape[0])
    hover = (
        f"{t('real.freq.axis_layer', lang)} %{{y}}<br>{t('real.freq.axis_wavelength', lang)} %{{x}}<br>"
        f"{t('real.freq.colour', lang)} %{{z:.2f}}"
    )
    trace = heatmap_trace(
        relative,
        x=labels,
        y=layers,
        colorscale=SEQUENTIAL,
        hover=hover,
        colorbar_title=t("real.freq.colour", lang),
        zmin=0.0,
    )
    return figure(
        [trace],
        title=title,
        x=t("real.freq.axis_wavelength", lang),
        y=t(f"real.freq.axis_layer_{part}", lang),
        xaxis={"type": "category", "tickangle": -60, "nticks": 12},
        yaxis={"autorange": "reversed"},
        height=460,
    )


def stopped_losses(
    counts: Sequence[int], change: Mapping[str, np.ndarray], *, chosen: int, title: str, lang: str
) -> go.Figure:
    r"""The loss change (nats per token) against the number of pairs stopped, one line per side (slowest /
    fastest), 0 (the model as trained) as the reference; the count the reader chose is marked on each line."""
    hover = f"{t('real.freq.axis_stopped', lang)} %{{x}}<br>Δ = %{{y:+.4f}}"
    size = [11 if count == chosen else 6 for count in counts]
    traces = [
        line_trace(np.asarray(counts), values, t(f"real.freq.side_{side}", lang), SIDE_COLOURS[side], hover)
        | {"mode": "lines+markers", "marker": {"size": size}}
        for side, values in change.items()
    ]
    return figure(
        traces,
        title=title,
        x=t("real.freq.axis_stopped", lang),
        y=t("real.axis_loss_change", lang),
        xaxis={"type": "log", "tickvals": list(counts), "ticktext": [str(c) for c in counts]},
        **reference_line(0.0, t("real.as_trained", lang), left=True),
        legend=legend_below(),
        height=420,
    )


def rescaled_losses(
    factors: Sequence[float], change: Mapping[str, np.ndarray], *, chosen: float, title: str, lang: str
) -> go.Figure:
    r"""The loss change (nats per token) against the scaling factor k (log axis), one line per method; the factor
    the reader chose is marked on each line."""
    x = np.asarray(factors, dtype=np.float64)
    hover = "k = %{x}<br>Δ = %{y:+.4f}"
    traces = []
    for method, values in change.items():
        trace = line_trace(x, values, t(f"real.rescale.method_{method}", lang), METHOD_COLOURS[method], hover)
        size = [11 if factor == chosen else 6 for factor in factors]
        traces.append(trace | {"mode": "lines+markers", "marker": {"size": size}})
    return figure(
        traces,
        title=title,
        x=t("real.rescale.axis_factor", lang),
        y=t("real.axis_loss_change", lang),
        xaxis={"type": "log", "tickvals": list(x), "ticktext": [f"{f:g}" for f in factors]},
        **reference_line(0.0, t("real.as_trained", lang), left=True),
        legend=legend_below(),
        height=440,
    )


def nope_layers(change: np.ndarray, *, highlight: Sequence[int], title: str, lang: str) -> go.Figure:
    r"""One bar per layer: the loss change (nats per token) when that layer alone loses position (cos = 1, sin = 0);
    the ``highlight`` layers (the largest changes, named in the words) in colour, the rest grey."""
    layers = np.arange(change.size)
    colours = [VERMILION if layer in set(highlight) else GREY for layer in layers]
    hover = f"{t('real.freq.axis_layer', lang)} %{{x}}<br>Δ = %{{y:+.4f}}<extra></extra>"
    bar = {
        "type": "bar",
        "x": layers,
        "y": np.asarray(change, dtype=np.float64),
        "marker": {"color": colours},
        "hovertemplate": hover,
        "showlegend": False,
    }
    return figure(
        [bar],
        title=title,
        x=t("real.freq.axis_layer", lang),
        y=t("real.axis_loss_change", lang),
        height=400,
    )


def beyond(
    run: BeyondRun,
    *,
    names: Mapping[str, str],
    colours: Mapping[str, str],
    hidden: Sequence[str] = (),
    title: str,
    lang: str,
) -> go.Figure:
    r"""Each rescaling's loss less the model's as trained, bin by bin, inside and past the training length: per
    method a line (the mean over the run's windows of the text) over a band from the lower to the higher window; 0 is
    the model as trained, the training length a dotted vertical line. ``hidden`` methods are listed in the legend
    only (PI, a nat above the others, would flatten them), drawn when clicked."""
    x = run.bin_start + run.bin_width / 2  # (bins,) each bin drawn at its middle
    hover = f"{t('real.beyond.axis_position', lang)} %{{x:,.0f}}<br>Δ = %{{y:+.3f}}"
    traces = []
    for method, name in names.items():
        windows = run.gap(method)  # (windows, bins)
        group = []
        if windows.shape[0] > 1:
            group.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "x": np.concatenate([x, x[::-1]]),
                    "y": np.concatenate([windows.max(axis=0), windows.min(axis=0)[::-1]]),
                    "fill": "toself",
                    "fillcolor": translucent(colours[method], BAND_ALPHA),
                    "line": {"width": 0},
                    "hoverinfo": "skip",
                    "showlegend": False,
                    "legendgroup": name,
                    "name": name,
                }
            )
        group.append(line_trace(x, windows.mean(axis=0), name, colours[method], hover) | {"legendgroup": name})
        traces += [trace | {"visible": "legendonly"} for trace in group] if method in hidden else group
    vertical = vertical_line(
        run.training_length, t("real.beyond.trained", lang, length=f"{run.training_length:,}"), log_axis=False
    )
    level = reference_line(0.0, t("real.as_trained", lang), left=True)
    return figure(
        traces,
        title=title,
        x=t("real.beyond.axis_position", lang),
        y=t("real.axis_loss_change", lang),
        shapes=level["shapes"] + vertical["shapes"],
        annotations=level["annotations"] + vertical["annotations"],
        legend=legend_below(),
        height=440,
    )
