r"""Page 3's questions: how much of the position code a linear probe reads back after each residual block."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ...figures.style import BLUE, VERMILION, figure, legend_below
from ...i18n import t


def probe_depth(kept: np.ndarray, lost: np.ndarray, *, lang: str) -> go.Figure:
    r"""R² of the position probe against depth: with the residual stream (kept) and without it (lost)."""
    blocks = np.arange(kept.shape[0])
    lines = [
        {
            "type": "scatter",
            "x": blocks,
            "y": curve,
            "mode": "lines+markers",
            "name": t(f"sinusoidal.{key}", lang),
            "line": {"color": colour},
            "hovertemplate": "%{x}: R² = %{y:.2f}<extra></extra>",
        }
        for key, curve, colour in (("probe_kept", kept, BLUE), ("probe_lost", lost, VERMILION))
    ]
    return figure(
        lines,
        title=t("sinusoidal.fig_depth", lang),
        x=t("sinusoidal.axis_block", lang),
        y=t("sinusoidal.axis_r2", lang),
        legend=legend_below(),
        yaxis={"range": [min(-0.1, float(lost.min()) - 0.05), 1.0]},
    )
