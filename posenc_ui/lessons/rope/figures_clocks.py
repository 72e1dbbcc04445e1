r"""Figures of page 6 (RoPE) that draw angles: one clock per pair with its hands turning (an animation), and the toy
clock of two rings where position 12 does or does not come back to 0. Pure builders: arrays in, ``go.Figure`` out.

The page imports them from :mod:`.figures`, with the page's other figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ...figures.built import BuiltFigure
from ...figures.style import (
    BLUE,
    FAINT_RING,
    GREY,
    GUIDE,
    HIDDEN_AXIS,
    ORANGE,
    TEMPLATE_SPEC,
    figure,
    fit_height,
    legend_below,
    title_layout,
    wrap_title,
)
from ...i18n import t

Q_COLOUR, K_COLOUR = BLUE, ORANGE
#: The outer and inner ring of the toy clock.
OUTER_COLOUR, INNER_COLOUR = BLUE, ORANGE
#: Clocks per row: three still read on a phone held upright.
CLOCK_COLUMNS = 2  # two a row: three a row left each clock ~130 px wide even on a projector
#: Distance between clock centres, in clock radii: across, and down (rows leave room for three lines of label).
CLOCK_SPACING, ROW_SPACING = 2.7, 3.4
ROW_HEIGHT = 360  # px a row of clocks: about 190 px a clock on a laptop or projector, 135 px on a phone
#: Over the clocks (the buttons and slider take the foot of the figure), in paper units, not the template's.
CLOCK_LEGEND = {
    "orientation": "h",
    "xref": "paper",
    "yref": "paper",
    "y": 1.0,
    "yanchor": "bottom",
    "x": 0,
    "xanchor": "left",
}
#: Milliseconds per animation frame.
FRAME_MS = 160
#: Points on a drawn circle (61: a closed ring of 60 segments).
RING_POINTS = 61


def _tokens(count: float) -> str:
    r"""A number of tokens as people write it: 6.28, 62.8, 628, 60,611."""
    return f"{count:,.0f}" if count >= 1000 else f"{count:.3g}"


# --- clock hands -----------------------------------------------------------------------------------------------


def _clock_centres(count: int, columns: int) -> np.ndarray:
    r"""(count, 2) centres on a grid of ``columns`` columns, first row on top."""
    j = np.arange(count)
    return np.stack([CLOCK_SPACING * (j % columns), -ROW_SPACING * (j // columns)], axis=1)


def _segments(starts: np.ndarray, ends: np.ndarray) -> tuple[list, list]:
    r"""x and y of the line segments starts[j] → ends[j], with gaps between them (one trace draws them all).

    Plain lists with None for the gaps: plotly validates the many small traces of an animation about three times
    faster from lists than from arrays.
    """
    xs: list = []
    ys: list = []
    for (x0, y0), (x1, y1) in zip(starts.tolist(), ends.tolist(), strict=True):
        xs += [x0, x1, None]
        ys += [y0, y1, None]
    return xs, ys


def _hands(centres: np.ndarray, tips: np.ndarray, colour: str, name: str) -> dict:
    xs, ys = _segments(centres, centres + tips)
    return {
        "type": "scatter",
        "x": xs,
        "y": ys,
        "mode": "lines+markers",
        "name": name,
        "hoverinfo": "skip",
        "line": {"color": colour, "width": 3},
        "marker": {"size": [0, 9, 0] * len(centres), "color": colour},
    }


def _faces(centres: np.ndarray) -> dict:
    r"""The unit circle around every centre, as one trace."""
    ring = np.linspace(0, 2 * math.pi, RING_POINTS)
    gap = np.full((centres.shape[0], 1), np.nan)  # lifts the pen between clocks
    return {
        "type": "scatter",
        "x": np.hstack([centres[:, :1] + np.cos(ring), gap]).ravel(),
        "y": np.hstack([centres[:, 1:] + np.sin(ring), gap]).ravel(),
        "mode": "lines",
        "hoverinfo": "skip",
        "line": {"color": GUIDE, "width": 1},
        "showlegend": False,
    }


def _start_hands(centres: np.ndarray, q_tips: np.ndarray, k_tips: np.ndarray, *, lang: str) -> dict:
    r"""Both hands at position 0 (unrotated), dotted grey, as one trace."""
    qx, qy = _segments(centres, centres + q_tips)
    kx, ky = _segments(centres, centres + k_tips)
    return {
        "type": "scatter",
        "x": qx + kx,
        "y": qy + ky,
        "mode": "lines",
        "name": t("rope.clock_start", lang),
        "hoverinfo": "skip",
        "line": {"color": GREY, "width": 1.5, "dash": "dot"},
    }


def _clock_labels(centres: np.ndarray, pairs: Sequence[int], inv_freq: np.ndarray, *, lang: str) -> list[dict]:
    r"""Above each clock: its pair index, frequency and period in tokens."""
    return [
        {
            "x": cx,
            "y": cy + 1.08,
            "xref": "x",
            "yref": "y",
            "showarrow": False,
            "yanchor": "bottom",
            "text": t("rope.clock_label", lang, i=i, theta=f"{theta:.3g}", period=_tokens(2 * math.pi / theta)),
            "font": {"size": 11},
        }
        for (cx, cy), i, theta in zip(centres, pairs, inv_freq, strict=True)
    ]


def _frames(centres: np.ndarray, q_tips: np.ndarray, k_tips: np.ndarray) -> list[dict]:
    r"""One animation frame per row of the (frames, P, 2) tips: only the coordinates of the two hands (traces 2 and 3)
    change from frame to frame."""
    frames = []
    for s, tips in enumerate(zip(q_tips, k_tips, strict=True)):
        hands = [_segments(centres, centres + tip) for tip in tips]
        frames.append(
            {"name": str(s), "data": [{"type": "scatter", "x": xs, "y": ys} for xs, ys in hands], "traces": [2, 3]}
        )
    return frames


def _player(frames: int, *, lang: str) -> tuple[dict, dict]:
    r"""The ▶ / ❚❚ buttons and the slider over ``frames`` animation frames (named "0", "1", …)."""
    still = {"frame": {"duration": 0, "redraw": False}, "mode": "immediate", "transition": {"duration": 0}}
    play = {"frame": {"duration": FRAME_MS, "redraw": False}, "transition": {"duration": 0}, "fromcurrent": True}
    slider = {
        "active": 0,
        "x": 0,
        "len": 1.0,
        "y": 0,
        "yanchor": "top",
        "pad": {"t": 52},  # under the buttons: a phone
        "currentvalue": {"prefix": t("rope.clock_shift", lang), "font": {"size": 12}},
        "steps": [{"label": str(s), "method": "animate", "args": [[str(s)], still]} for s in range(frames)],
    }
    buttons = {
        "type": "buttons",
        "direction": "left",
        "showactive": False,
        "x": 0,
        "y": 0,
        "xanchor": "left",
        "yanchor": "top",
        "pad": {"t": 14},
        "buttons": [
            {"label": "▶", "method": "animate", "args": [None, play]},
            {"label": "❚❚", "method": "animate", "args": [[None], still]},
        ],
    }
    return buttons, slider


def _clock_canvas(count: int, columns: int) -> dict:
    r"""The layout that places ``count`` clocks, ``columns`` a row, to scale: axes, height, margins, legend."""
    rows = -(-count // columns)
    width = CLOCK_SPACING * (min(count, columns) - 1)
    x_range, y_range = [-1.35, width + 1.35], [-ROW_SPACING * (rows - 1) - 1.3, 2.1]
    return {
        "template": TEMPLATE_SPEC,
        "height": 190 + ROW_HEIGHT * rows,  # a phone draws it shorter: meta.fit
        "meta": fit_height(x_range[1] - x_range[0], y_range[1] - y_range[0]),
        "xaxis": {**HIDDEN_AXIS, "range": x_range},
        "yaxis": {**HIDDEN_AXIS, "scaleanchor": "x", "range": y_range},
        "legend": CLOCK_LEGEND,
        # t: a phone wraps the legend into two rows under the title; a canvas wide enough for more clocks a row does not
        "margin": {"l": 8, "r": 8, "t": 116 if columns <= CLOCK_COLUMNS else 84, "b": 104},
    }


def clocks(
    q_pairs: np.ndarray,
    k_pairs: np.ndarray,
    q_start: np.ndarray,
    k_start: np.ndarray,
    pairs: Sequence[int],
    inv_freq: np.ndarray,
    m: int,
    n: int,
    *,
    lang: str,
    columns: int = CLOCK_COLUMNS,
) -> go.Figure:
    r"""One clock per pair i: the q pair at position m + t (blue) and the k pair at n + t (orange), t = frame.

    ``q_pairs`` / ``k_pairs`` are (frames, P, 2): the rotated pairs for t = 0, 1, …; ``q_start`` / ``k_start``
    (P, 2) the unrotated ones (position 0, dotted). Each clock is scaled by its longest hand (rotation keeps
    lengths, so that is the same in every frame). Playing the frames moves both positions together: both hands
    turn, the angle between them — all the score sees — stays. ``columns`` clocks a row (a wide, short canvas such as
    presenter mode draws them all in one row).
    """
    count = len(pairs)
    centres = _clock_centres(count, columns)
    radius = np.maximum(np.linalg.norm(q_start, axis=1), np.linalg.norm(k_start, axis=1))[:, None]  # (P, 1)
    radius[radius == 0] = 1.0
    hands = [
        _hands(centres, q_pairs[0] / radius, Q_COLOUR, t("rope.clock_q", lang)),
        _hands(centres, k_pairs[0] / radius, K_COLOUR, t("rope.clock_k", lang)),
    ]
    frames = _frames(centres, q_pairs / radius, k_pairs / radius)
    buttons, slider = _player(len(frames), lang=lang)
    layout = {
        **_clock_canvas(count, columns),
        "title": title_layout(wrap_title(t("rope.fig_clocks", lang, m=m, n=n))),
        "annotations": _clock_labels(centres, pairs, inv_freq, lang=lang),
        "updatemenus": [buttons],
        "sliders": [slider],
    }
    data = [_faces(centres), _start_hands(centres, q_start / radius, k_start / radius, lang=lang), *hands]
    return BuiltFigure({"data": data, "layout": layout, "frames": frames})


# --- the toy clock -------------------------------------------------------------------------------------------------


def _joint_labels(x: np.ndarray, y: np.ndarray, names: Sequence[str]) -> list[str]:
    r"""Labels for points that may coincide: "0 = 12" on the first of a group, blank on the others."""
    labels = []
    for j, name in enumerate(names):
        same = [names[i] for i in range(len(names)) if math.hypot(x[i] - x[j], y[i] - y[j]) < 1e-9]
        labels.append(" = ".join(same) if same[0] == name else "")
    return labels


def toy_clock(angles: np.ndarray, highlight: Sequence[int], *, lang: str) -> go.Figure:
    r"""Positions 0 … L − 1 as points on two rings: ``angles[:, 0]`` outside (30° per token), ``angles[:, 1]``
    inside. On the outer ring position 12 lands on position 0; on the inner ring it does not."""
    positions = np.arange(angles.shape[0])
    traces = []
    for ring, (radius, colour) in enumerate(((1.0, OUTER_COLOUR), (0.62, INNER_COLOUR))):
        x, y = radius * np.cos(angles[:, ring]), radius * np.sin(angles[:, ring])
        near = np.isin(positions, highlight)
        theta = np.linspace(0, 2 * math.pi, RING_POINTS)
        traces += [
            {
                "type": "scatter",
                "x": radius * np.cos(theta),
                "y": radius * np.sin(theta),
                "mode": "lines",
                "line": {"color": FAINT_RING, "width": 1},
                "hoverinfo": "skip",
                "showlegend": False,
            },
            {
                "type": "scatter",
                "x": x[~near],
                "y": y[~near],
                "mode": "markers",
                "showlegend": False,
                "marker": {"color": colour, "size": 6, "opacity": 0.45},
                "customdata": positions[~near],
                "hovertemplate": "p = %{customdata}<extra></extra>",
            },
            {
                "type": "scatter",
                "x": x[near],
                "y": y[near],
                "mode": "markers+text",
                "customdata": positions[near],
                "text": _joint_labels(x[near], y[near], [str(p) for p in positions[near]]),
                "textposition": "middle right" if ring else "top center",
                "marker": {"color": colour, "size": 12, "line": {"color": "white", "width": 1}},
                "name": t(f"rope.toy_ring_{ring}", lang),
                "hovertemplate": "p = %{customdata}<extra></extra>",
            },
        ]
    return figure(
        traces,
        title=t("rope.fig_toy", lang),
        height=440,
        xaxis={**HIDDEN_AXIS, "range": [-1.3, 1.3]},
        yaxis={**HIDDEN_AXIS, "range": [-1.3, 1.3], "scaleanchor": "x"},
        legend=legend_below(),
    )
