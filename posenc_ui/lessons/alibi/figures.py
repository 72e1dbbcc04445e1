r"""Figures of page 8: ALiBi's slopes, bias and attention heatmaps per head, receptive fields, the two bias forms."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ...figures.heatmap import heatmap_trace
from ...figures.style import (
    BLUE,
    ORANGE,
    PALETTE,
    SELECTED,
    SEQUENTIAL,
    TITLE_UNITS,
    TRANSPARENT,
    axis,
    figure,
    legend_below,
    reference_line,
    wrap_title,
)
from ...i18n import t

#: Panels per row in the per-head grids: two stay legible on a phone.
COLUMNS = 2
PANEL_HEIGHT = 280  # px per row of panels
GAP = 0.08  # fraction of the width between panels
V_GAP = 0.16  # fraction of a row's height kept for the panel title and the tick labels above it


def exponent_label(exponent: float) -> str:
    r"""``2<sup>−3.5</sup>``: slopes are read as powers of two."""
    return f"2<sup>−{exponent:g}</sup>"


def slopes(values: np.ndarray, exponents: np.ndarray, closest: int, *, lang: str) -> go.Figure:
    r"""Slope per head on a log₂ axis: the first c heads (geometric sequence) and the rest (every other slope of 2c)."""
    heads = np.arange(values.shape[0])
    groups = (("geometric", heads < closest, BLUE), ("between", heads >= closest, ORANGE))
    traces = [
        {
            "type": "scatter",
            "x": heads[mask],
            "y": values[mask],
            "mode": "markers+lines" if name == "geometric" else "markers",
            "marker": {"color": colour, "size": 8 if values.shape[0] <= 32 else 5},
            "line": {"color": colour, "width": 1},
            "name": t(f"alibi.group_{name}", lang, c=closest, c2=2 * closest),
            "customdata": [exponent_label(e) for e in exponents[mask]],
            "hovertemplate": f"{t('alibi.head', lang)} %{{x}}: m = %{{customdata}} = %{{y:.5g}}<extra></extra>",
            "showlegend": bool(mask.any()),
        }
        for name, mask, colour in groups
    ]  # both groups always, one maybe empty: the exported slider over head counts needs fixed traces
    ticks = np.arange(0, int(np.ceil(exponents.max())) + 1)
    return figure(
        traces,
        title=t("alibi.fig_slopes", lang, n_heads=values.shape[0]),
        x=t("alibi.axis_head", lang),
        y=t("alibi.axis_slope", lang),
        height=400,
        yaxis={"type": "log", "tickvals": 2.0**-ticks, "ticktext": [exponent_label(e) for e in ticks]},
        legend=legend_below(),
    )


def _grid(n_panels: int, columns: int = COLUMNS, gap: float = GAP) -> tuple[int, list[dict]]:
    r"""Rows of the panel grid and, per panel, its axis domains (row-major, top row first); ``gap``: the fraction of
    the width between two panels side by side."""
    columns = min(columns, n_panels)
    rows = -(-n_panels // columns)
    domains = []
    for p in range(n_panels):
        r, c = divmod(p, columns)
        x0, x1 = c / columns, (c + 1) / columns
        y1, y0 = 1 - r / rows, 1 - (r + 1) / rows
        domains.append(
            {
                "x": [x0 + gap / 2 * (c > 0), x1 - gap / 2 * (c < columns - 1)],
                "y": [y0 + V_GAP / rows * (r < rows - 1), y1 - V_GAP / rows],
            }
        )
    return rows, domains


def panel_heatmaps(
    matrices: Sequence[np.ndarray],
    titles: Sequence[str],
    positions: np.ndarray,
    *,
    title: str,
    value_name: str,
    lang: str,
    zmin: float | None = None,
    zmax: float | None = None,
    shared_scale: bool = True,
    columns: int = COLUMNS,
    gap: float = GAP,
    reverse: Sequence[bool] = (),
) -> go.Figure:
    r"""One heatmap per matrix in a grid, queries down and keys across (``positions`` are the sampled positions).

    ``shared_scale``: one colour axis for all panels (so heads compare); otherwise each panel has its own range and
    its own colour bar beside it. ``reverse[p]`` turns panel p's scale round (a distance drawn so that yellow is
    near, as a bias is yellow where it favours a key). NaN cells (masked keys) are left blank. ``gap``: the fraction
    of the width between panels (wider for a figure drawn in a narrow column, where the left panel's last key tick
    would touch the next panel's query ticks, and for colour bars). The keys' axis is named under the bottom row, the
    queries' beside the left column.
    """
    rows, domains = _grid(len(matrices), columns, gap)
    data, layout, annotations = [], {}, []
    hover = f"{axis('query', lang)} %{{y}}<br>{axis('key', lang)} %{{x}}<br>{value_name} %{{z:.4g}}"
    last_row = {p for p, domain in enumerate(domains) if domain["y"][0] == min(d["y"][0] for d in domains)}
    for p, (z, domain) in enumerate(zip(matrices, domains, strict=True)):
        suffix = "" if p == 0 else str(p + 1)
        if shared_scale:
            scale: dict = {"coloraxis": "coloraxis"}
        else:
            scale = {
                "showscale": True,
                "reversescale": bool(reverse[p]) if p < len(reverse) else False,
                "colorbar": {
                    "x": domain["x"][1] + 0.01,
                    "xanchor": "left",
                    "y": sum(domain["y"]) / 2,
                    "yanchor": "middle",
                    "len": domain["y"][1] - domain["y"][0],
                    "thickness": 8,
                    "tickfont": {"size": 9},
                    "nticks": 4,
                },
            }
        trace = heatmap_trace(z, x=positions, y=positions, colorscale=SEQUENTIAL, hover=hover, **scale)
        data.append(trace | {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"})
        layout[f"xaxis{suffix}"] = {"domain": domain["x"], "anchor": f"y{suffix}", "nticks": 5}
        layout[f"yaxis{suffix}"] = {"domain": domain["y"], "anchor": f"x{suffix}", "autorange": "reversed", "nticks": 5}
        if p in last_row or p + columns >= len(matrices):
            layout[f"xaxis{suffix}"]["title"] = {"text": axis("key", lang), "standoff": 4}
        if p % columns == 0:
            layout[f"yaxis{suffix}"]["title"] = {"text": axis("query", lang), "standoff": 4}
        text = wrap_title(titles[p], TITLE_UNITS // columns)  # side by side on a phone: each its own lines
        annotations.append(
            {
                "text": text,
                "xref": "paper",
                "yref": "paper",
                "x": sum(domain["x"]) / 2,
                "y": domain["y"][1],
                "xanchor": "center",
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": 12},
            }
        )
    if shared_scale:
        layout["coloraxis"] = {
            "colorscale": SEQUENTIAL,
            "cmin": zmin,
            "cmax": zmax,
            "colorbar": {"title": {"text": value_name}, "thickness": 12, "len": 0.9},
        }
    return figure(
        data, title=title, height=80 + PANEL_HEIGHT * rows, annotations=annotations, margin={"t": 84, "b": 30}, **layout
    )


def receptive_field(
    fields: np.ndarray, closest: int, shown: Sequence[int], length: int, threshold: float, *, lang: str
) -> go.Figure:
    r"""τ / m per head on a log axis; the heads drawn above are outlined, the sequence length is a reference line."""
    heads = np.arange(fields.shape[0])
    bar = {
        "type": "bar",
        "x": heads,
        "y": fields,
        "marker": {
            "color": np.where(heads < closest, BLUE, ORANGE).tolist(),
            "line": {"color": [SELECTED if h in shown else TRANSPARENT for h in heads], "width": 2},
        },
        "hovertemplate": f"{t('alibi.head', lang)} %{{x}}: d = %{{y:.4g}}<extra></extra>",
    }
    return figure(
        [bar],
        title=t("alibi.fig_field", lang, threshold=threshold),
        x=t("alibi.axis_head", lang),
        y=t("alibi.axis_field", lang),
        height=400,
        yaxis={"type": "log", "exponentformat": "power", "dtick": 1},
        **reference_line(length, t("alibi.length_line", lang, length=length), log_axis=True, left=True),
    )


def bias_curves(
    distances: np.ndarray, curves: np.ndarray, heads: Sequence[int], fields: np.ndarray, threshold: float, *, lang: str
) -> go.Figure:
    r"""The penalty :math:`-m_h d` against distance for the shown heads, the threshold −τ, and where each crosses it."""
    traces = []
    head = t("alibi.head", lang)
    for n, (h, curve, field) in enumerate(zip(heads, curves, fields, strict=True)):
        colour = PALETTE[n % len(PALETTE)]
        traces.append(
            {
                "type": "scatter",
                "x": distances,
                "y": curve,
                "mode": "lines",
                "line": {"color": colour},
                "name": f"{head} {h}",
                "hovertemplate": "d = %{x}: %{y:.3f}<extra></extra>",
            }
        )
        # Where the curve crosses −τ, or an empty marker past the drawn range (an exported slider needs fixed traces).
        cross = ([field], [-threshold]) if field <= distances[-1] else ([], [])
        traces.append(
            {
                "type": "scatter",
                "x": cross[0],
                "y": cross[1],
                "mode": "markers",
                "marker": {"color": colour, "size": 10, "symbol": "x"},
                "showlegend": False,
                "hovertemplate": f"{head} {h}: d = %{{x:.4g}}<extra></extra>",
            }
        )
    floor = max(float(curves.min()), -4 * threshold)  # the slow heads would flatten everything else
    return figure(
        traces,
        title=t("alibi.fig_curves", lang),
        x=t("alibi.axis_distance", lang),
        y=t("alibi.axis_bias", lang),
        height=400,
        yaxis={"range": [floor * 1.05, threshold * 0.1]},
        legend=legend_below(),
        **reference_line(-threshold, f"−τ = −{threshold:g}", left=True),
    )


def masked(z: np.ndarray) -> np.ndarray:
    r"""−inf (masked keys) as NaN, which a heatmap leaves blank (JSON has no infinity)."""
    return np.where(np.isneginf(z), np.nan, z)
