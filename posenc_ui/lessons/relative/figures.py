r"""Figures of page 5: Shaw's clipped index, the scalar bias :math:`R_{j-i}`, T5's buckets, the cross term."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ...figures.heatmap import heatmap_trace
from ...figures.style import (
    BLUE,
    DIVERGING,
    GREY,
    ORANGE,
    SEQUENTIAL,
    VERMILION,
    WHITE,
    axis,
    figure,
    fit_height,
    legend_below,
    translucent,
)
from ...i18n import t

#: Cells are labelled with their value up to this many a side.
MAX_LABELLED = 20


def _cell_labels(z: np.ndarray, fmt: str) -> dict:
    r"""Text labels for small matrices (``texttemplate``), nothing for large ones."""
    if max(z.shape) > MAX_LABELLED:
        return {}
    return {"text": np.char.mod(fmt, z), "texttemplate": "%{text}", "textfont": {"size": 10}}


def _matrix_layout(title: str, lang: str, shape: tuple[int, ...], *, height: int = 420) -> dict:
    r"""A heatmap of square cells, ``shape`` = (rows, cols): a phone draws it no taller than its cells need."""
    return {
        "title": title,
        "x": axis("key", lang),
        "y": axis("query", lang),
        "height": height,
        "yaxis": {"autorange": "reversed", "scaleanchor": "x", "constrain": "domain"},
        "xaxis": {"constrain": "domain"},
        "meta": fit_height(shape[1], shape[0]),
    }


def shaw_index(index: np.ndarray, rows: np.ndarray, cols: np.ndarray, max_relative: int, *, lang: str) -> go.Figure:
    r"""The (Lq, Lk) index :math:`\mathrm{clip}(j - i, -k, k) + k`: k in the middle (offset 0), 0 and 2k at the clips.

    ``rows`` and ``cols`` are the absolute query and key positions (queries are the last Lq keys).
    """
    k = max_relative
    hover = f"{axis('query', lang)} %{{y}}<br>{axis('key', lang)} %{{x}}<br>{t('relative.index_hover', lang)} %{{z}}"
    trace = heatmap_trace(
        index,
        x=cols,
        y=rows,
        colorscale=DIVERGING,
        zmid=float(k),
        zmin=0.0,
        zmax=float(max(2 * k, 1)),
        hover=hover,
        colorbar_title=t("relative.index_bar", lang),
        **_cell_labels(index, "%d"),
    )
    title = t("relative.fig_shaw", lang, lq=len(rows), lk=len(cols), k=k, size=2 * k + 1)
    return figure([trace], **_matrix_layout(title, lang, index.shape))


def bias_table(weights: np.ndarray, max_relative: int, *, lang: str) -> go.Figure:
    r"""The 2k + 1 learned scalars :math:`R_r`, r = −k … k: all the bias matrix is made of."""
    offsets = np.arange(-max_relative, max_relative + 1)
    bar = {
        "type": "bar",
        "x": offsets,
        "y": weights,
        "marker": {"color": VERMILION},
        "hovertemplate": "r = %{x}: R<sub>r</sub> = %{y:.4f}<extra></extra>",
    }
    return figure(
        [bar],
        title=t("relative.fig_table", lang, size=2 * max_relative + 1),
        x=t("relative.axis_offset", lang),
        y="R<sub>r</sub>",
        height=420,
    )


def bias_matrix(bias: np.ndarray, rows: np.ndarray, cols: np.ndarray, *, lang: str) -> go.Figure:
    r""":math:`A_{\text{rel}}(i, j) = R_{\mathrm{clip}(j-i)}`: the same colour along every diagonal."""
    limit = float(np.max(np.abs(bias))) or 1.0
    hover = f"{axis('query', lang)} %{{y}}<br>{axis('key', lang)} %{{x}}<br>A<sub>rel</sub> = %{{z:.4f}}"
    trace = heatmap_trace(bias, x=cols, y=rows, colorscale=DIVERGING, zmid=0.0, zmin=-limit, zmax=limit, hover=hover)
    return figure([trace], **_matrix_layout(t("relative.fig_bias", lang), lang, bias.shape))


def t5_buckets(
    relative: np.ndarray,
    bidirectional: np.ndarray,
    causal: np.ndarray,
    *,
    max_exact_bidirectional: int,
    max_exact_causal: int,
    max_distance: int,
    lang: str,
) -> go.Figure:
    r"""Bucket against relative position r = j − i, both modes; dotted where exact turns logarithmic, dashed at
    ±max_distance (everything beyond shares the last bucket)."""
    hover = f"r = %{{x}}: {t('relative.axis_bucket', lang)} %{{y}}<extra></extra>"
    traces = [
        {
            "type": "scatter",
            "x": relative,
            "y": buckets,
            "mode": "lines",
            "line": {"shape": "hv", "color": colour},
            "name": t(f"relative.direction.{mode}", lang),
            "hovertemplate": hover,
        }
        for mode, buckets, colour in (("bidirectional", bidirectional, BLUE), ("causal", causal, ORANGE))
    ]
    marks = [
        (-max_exact_bidirectional, BLUE, "dot"),
        (max_exact_bidirectional, BLUE, "dot"),
        (-max_exact_causal, ORANGE, "dot"),
        (-max_distance, GREY, "dash"),
        (max_distance, GREY, "dash"),
    ]
    shapes = [
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": x,
            "x1": x,
            "y0": 0,
            "y1": 1,
            "line": {"color": colour, "dash": dash, "width": 1},
        }
        for x, colour, dash in marks
    ]
    labels = [
        (max_exact_bidirectional, BLUE, f"max_exact = {max_exact_bidirectional}", 0.05),
        (-max_exact_causal, ORANGE, f"max_exact = {max_exact_causal}", 0.95),
        (max_distance, GREY, f"max_distance = {max_distance}", 0.5),
    ]
    annotations = [
        {
            "x": x,
            "xref": "x",
            "y": y,
            "yref": "paper",
            "text": text,
            "showarrow": False,
            "xanchor": "left",
            "font": {"color": colour, "size": 11},
            "bgcolor": translucent(WHITE, 0.8),
        }
        for x, colour, text, y in labels
    ]
    return figure(
        traces,
        title=t("relative.fig_t5", lang),
        x=t("relative.axis_offset", lang),
        y=t("relative.axis_bucket", lang),
        height=420,
        shapes=shapes,
        annotations=annotations,
    )


def bucket_matrix(buckets: np.ndarray, positions: np.ndarray, *, mode: str, lang: str) -> go.Figure:
    r"""T5's (L, L) bucket matrix (sampled at screen resolution): wide bands far from the diagonal are the log part."""
    bucket = t("relative.axis_bucket", lang)
    hover = f"{axis('query', lang)} %{{y}}<br>{axis('key', lang)} %{{x}}<br>{bucket} %{{z}}"
    trace = heatmap_trace(buckets, x=positions, y=positions, colorscale=SEQUENTIAL, hover=hover, colorbar_title=bucket)
    title = t("relative.fig_t5_matrix", lang, mode=t(f"relative.direction.{mode}", lang), length=len(positions))
    return figure([trace], **_matrix_layout(title, lang, buckets.shape, height=460))


def cross_scores(scores: np.ndarray, *, projection: str, lang: str) -> go.Figure:
    r""":math:`S_{mn} = p_m W_Q W_K^\top p_n^\top` of sinusoids: diagonals are constant only if S is relative."""
    limit = float(np.max(np.abs(scores))) or 1.0
    positions = np.arange(scores.shape[0])
    hover = "m = %{y}, n = %{x}<br>S = %{z:.3f}"
    trace = heatmap_trace(
        scores, x=positions, y=positions, colorscale=DIVERGING, zmid=0.0, zmin=-limit, zmax=limit, hover=hover
    )
    title = t("relative.fig_cross", lang, projection=t(f"relative.projection.{projection}", lang))
    layout = _matrix_layout(title, lang, scores.shape)
    return figure([trace], **{**layout, "x": t("relative.axis_n", lang), "y": t("relative.axis_m", lang)})


def diagonal_spreads(offsets: np.ndarray, additive: np.ndarray, relative: np.ndarray, *, lang: str) -> go.Figure:
    r"""max − min along each diagonal n − m: how much a fixed offset's score depends on where the pair sits."""
    traces = [
        {
            "type": "scatter",
            "x": offsets,
            "y": spread,
            "mode": "lines+markers",
            "marker": {"size": 4},
            "line": {"color": colour},
            "name": t(f"relative.spread_{name}", lang),
            "hovertemplate": "n − m = %{x}: %{y:.3g}<extra></extra>",
        }
        for name, spread, colour in (("additive", additive, BLUE), ("relative", relative, VERMILION))
    ]
    return figure(
        traces,
        title=t("relative.fig_spread", lang),
        x=t("relative.axis_nm", lang),
        y=t("relative.axis_spread", lang),
        height=420,
        legend=legend_below(),
    )
