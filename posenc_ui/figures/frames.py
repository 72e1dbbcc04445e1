r"""One figure that keeps its main slider with no server behind it: plotly.js frames, one per value of the slider.

The export builds a page's figure at every value of one parameter (the core computes each, at export time), and
:func:`with_slider` stacks them into a single figure whose slider swaps frames in the browser. Saved as HTML it stays
interactive from a ``file://`` URL, with the network off, in any page that can show an ``<iframe>``.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

#: Room under the plot for the slider and its label, px.
SLIDER_ROOM = 90

#: Show a frame at once: no tweening (heatmaps cannot tween), and a full redraw so colour scales follow the data.
_SHOW_AT_ONCE = {"mode": "immediate", "frame": {"duration": 0, "redraw": True}, "transition": {"duration": 0}}


def _shape(fig: dict) -> list[str]:
    return [trace.get("type", "scatter") for trace in fig.get("data", [])]


def with_slider(figures: Sequence[dict], labels: Sequence[str], *, active: int, prefix: str) -> go.Figure:
    r"""One figure showing ``figures[active]``, with a slider over every figure (``labels`` name the steps).

    ``figures`` are figure dicts (``fig.to_dict()``) with the same traces in the same order: a frame replaces each
    trace's data and the layout's changing parts (title, axes), so the traces must line up. The frames carry no
    template: the shown figure's applies to all.
    """
    if not figures or len(figures) != len(labels):
        raise ValueError(f"need one label per figure, got {len(figures)} figures and {len(labels)} labels")
    if not 0 <= active < len(figures):
        raise ValueError(f"active must index a figure (0 … {len(figures) - 1}), got {active}")
    shape = _shape(figures[active])
    for label, fig in zip(labels, figures, strict=True):
        if _shape(fig) != shape:
            raise ValueError(f"frame {label!r} has traces {_shape(fig)}, the shown figure {shape}")
    frames = [
        {"name": str(i), "data": fig["data"], "layout": {k: v for k, v in fig["layout"].items() if k != "template"}}
        for i, fig in enumerate(figures)
    ]
    shown = figures[active]
    layout = dict(shown["layout"])
    margin = dict(layout.get("margin", {}))
    margin["b"] = margin.get("b", 40) + SLIDER_ROOM
    layout["margin"] = margin
    if "height" in layout:
        layout["height"] = layout["height"] + SLIDER_ROOM
    layout["sliders"] = [
        {
            "active": active,
            "currentvalue": {"prefix": prefix, "font": {"size": 14}},
            "pad": {"t": 30},
            "steps": [
                {"label": label, "method": "animate", "args": [[str(i)], _SHOW_AT_ONCE]}
                for i, label in enumerate(labels)
            ],
        }
    ]
    return go.Figure({"data": shown["data"], "layout": layout, "frames": frames})
