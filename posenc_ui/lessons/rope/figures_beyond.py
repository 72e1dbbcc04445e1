r"""Page 6, beyond one dimension: 2-D (axial) RoPE's scores on an image's patch grid."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ...figures.heatmap import heatmap_trace
from ...figures.style import DIVERGING, SELECTED, figure, fit_height
from ...i18n import t


def axial_scores(scores: np.ndarray, query: tuple[int, int], *, lang: str) -> go.Figure:
    r"""The (rows, cols) grid of scores from the query patch (outlined) to every patch."""
    rows, cols = scores.shape
    trace = heatmap_trace(
        scores,
        x=np.arange(cols),
        y=np.arange(rows),
        colorscale=DIVERGING,
        zmid=0.0,
        hover=t("rope.axial_hover", lang) + " %{y}, %{x}<br>%{z:.3f}",
        colorbar_title=t("rope.axial_colorbar", lang),
    )
    r, c = query
    outline = {
        "type": "rect",
        "x0": c - 0.5,
        "x1": c + 0.5,
        "y0": r - 0.5,
        "y1": r + 0.5,
        "line": {"color": SELECTED, "width": 2.5},
    }
    return figure(
        [trace],
        title=t("rope.fig_axial", lang, rows=rows, cols=cols),
        x=t("rope.axial_col", lang),
        y=t("rope.axial_row", lang),
        shapes=[outline],
        yaxis={"autorange": "reversed", "scaleanchor": "x", "constrain": "domain"},
        xaxis={"constrain": "domain"},
        meta=fit_height(cols, rows),  # square patches: a phone draws it no taller than they need
    )
