r"""Figures of the real-model page's first section: the logits' change against the shift Δ beside the float32 rounding
of the angles, and the loss with the positions in order, reversed and shuffled. Arrays in, figures out: no model,
no Streamlit."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_real.relativity import OrderLosses, ShiftCurve

from ...figures.style import GREY, PRIMARY, SELECTED, THEORY, VERMILION, figure, line_trace, vertical_line
from ...i18n import t


def shift(curve: ShiftCurve, rounding: np.ndarray, delta: int, change: float, *, lang: str) -> go.Figure:
    r"""max |Δ logit| against Δ (log–log), the float32 rounding of the fastest angle at the largest position beside it,
    the reader's Δ marked, and the model's training length (8,192 positions) as a dotted line."""
    hover = t("real.hover_shift", lang)
    measured = line_trace(curve.deltas, curve.max_change, t("real.trace_change", lang), PRIMARY, hover)
    measured["mode"] = "lines+markers"
    theory = line_trace(curve.deltas, rounding, t("real.trace_rounding", lang), THEORY, hover, dash="dot")
    chosen = {
        "type": "scatter",
        "x": [delta],
        "y": [max(change, 1e-9)],  # Δ where nothing moved would sit at 0, off a log axis
        "mode": "markers",
        "marker": {"color": VERMILION, "size": 12, "line": {"color": SELECTED, "width": 1.5}},
        "name": t("real.trace_chosen", lang, delta=f"{delta:,}"),
        "hovertemplate": hover + "<extra></extra>",
    }
    trained = vertical_line(8192, t("real.trained_length", lang))
    return figure(
        [measured, theory, chosen],
        title=t("real.fig_shift", lang, tokens=curve.length),
        x=t("real.axis_delta", lang),
        y=t("real.axis_change", lang),
        xaxis={"type": "log"},
        yaxis={"type": "log", "exponentformat": "power"},
        **trained,
    )


def orders(losses: OrderLosses, *, lang: str) -> go.Figure:
    r"""One bar per order of the positions: the model's mean next-token loss (nats) on the same tokens."""
    names = [t(f"real.order.{order}", lang) for order in losses.orders]
    colours = [PRIMARY if order == "in_order" else GREY for order in losses.orders]
    bars = {
        "type": "bar",
        "x": names,
        "y": losses.loss,
        "marker": {"color": colours},
        "text": [f"{loss:.2f}" for loss in losses.loss],
        "textposition": "outside",
        "cliponaxis": False,
        "hovertemplate": "%{x}: %{y:.3f}<extra></extra>",
        "showlegend": False,
    }
    return figure(
        [bars],
        title=t("real.fig_orders", lang, tokens=losses.length),
        x=t("real.axis_order", lang),
        y=t("real.axis_loss", lang),
        yaxis={"rangemode": "tozero"},
    )
