r"""A page's figure with its main slider kept, for files that have no server behind them.

Each view declares, per figure, the one parameter a lecturer would drag (``View.sweeps``), or says why the figure
stays still (``View.static``). :func:`swept_figure` builds the figure at every allowed value of that parameter
(at most :data:`MAX_FRAMES`, the current value always among them; the others stay at their current values), asking
the core for each at export time, and stacks them with :func:`~posenc_ui.figures.frames.with_slider`. A value the
core refuses, or whose figure has other traces than the shown one, is left out of the slider.

Arrays go as float32, and heatmaps are thinned to :data:`FRAME_CELLS` cells a frame in all, every s-th row and
column as the page does (:mod:`posenc_ui.figures.heatmap`), so 24 frames of a heatmap weigh what about two of its
live figures do.
No Streamlit here: the app's download panel and the static site (:mod:`posenc_ui.export`) both call it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go

from posenc_core import PosEncError

from .figures import heatmap
from .figures.built import typed_array, unwire
from .figures.frames import with_slider
from .i18n import t
from .lesson import View
from .state import ChoiceParam, IntParam, Param

#: Frames a slider holds at most: enough to drag through, few enough to keep a file small.
MAX_FRAMES = 24
#: Heatmap cells one frame sends, all its heatmaps together (~7 bytes a cell as float32 JSON: ~0.1 MB a frame).
FRAME_CELLS = 16_000


def sweep_values(param: Param, values: Mapping[str, Any]) -> list[Any]:
    r"""``param``'s allowed values right now, at most :data:`MAX_FRAMES` evenly picked, ``values[param]`` among them."""
    if isinstance(param, IntParam):
        allowed: list[Any] = list(range(param.lo, param.upper(values) + 1, param.step))
    elif isinstance(param, ChoiceParam):
        allowed = list(param.options)
    else:
        raise TypeError(f"{param.name}: only an IntParam or a ChoiceParam can be a slider, not {type(param).__name__}")
    current = values[param.name]
    if len(allowed) > MAX_FRAMES:
        picks = np.unique(np.linspace(0, len(allowed) - 1, MAX_FRAMES - 1).round().astype(int))
        allowed = [allowed[i] for i in picks]
    if current not in allowed:
        allowed = sorted([*allowed, current]) if isinstance(param, IntParam) else [*allowed, current]
    return allowed


def value_label(param: Param, value: Any, page_id: str, lang: str) -> str:
    r"""A slider step's label, as the page's widget shows the value (words for word choices)."""
    if isinstance(param, ChoiceParam) and isinstance(value, str):
        return t(f"{param.labels or f'{page_id}.{param.name}'}.{value}", lang)
    return f"{value:,.0f}" if isinstance(value, int | float) else str(value)


def with_value(view: View, values: Mapping[str, Any], name: str, value: Any) -> dict[str, Any]:
    r"""``values`` with ``name`` set to ``value``, every parameter re-clamped in order (a bound may follow it)."""
    moved = {**values, name: value}
    for param in view.params:
        moved[param.name] = param.clamp(moved[param.name], moved)
    return moved


def _shape(fig: dict) -> list[str]:
    return [trace.get("type", "scatter") for trace in fig.get("data", [])]


def swept_figure(view: View, name: str, values: Mapping[str, Any], lang: str) -> go.Figure:
    r"""``view.figures[name]`` at ``values``, with its declared slider as plotly.js frames (or as it is, if none)."""
    build = view.figures[name]
    swept = view.sweeps.get(name)
    if swept is None:
        return build(values, lang)
    param = view.param(swept)
    shown = lighten(build(values, lang).to_dict())
    figures, labels, active = [], [], 0
    for value in sweep_values(param, values):
        if value == values[swept]:
            fig, active = shown, len(figures)
        else:
            try:
                fig = lighten(build(with_value(view, values, swept, value), lang).to_dict())
            except PosEncError:  # the core refuses this value (a position past the table's end): no step for it
                continue
            if _shape(fig) != _shape(shown):
                continue
        figures.append(fig)
        labels.append(value_label(param, value, view.page_id, lang))
    prefix = f"{t(f'{view.page_id}.{swept}', lang)}: "
    return with_slider(figures, labels, active=active, prefix=prefix)


def lighten(fig: dict, *, max_cells: int = FRAME_CELLS) -> dict:
    r"""``fig`` (a figure dict) with its float64 arrays sent as float32 (as the page sends heatmaps: half the bytes,
    more digits than a screen shows) and every heatmap sampled to every s-th row and column, ``max_cells`` in all."""
    fig["data"] = [_as_float32(trace) for trace in fig.get("data", [])]
    maps = [trace for trace in fig.get("data", []) if trace.get("type") == "heatmap" and "z" in trace]
    for trace in maps:
        z = np.asarray(unwire(trace["z"]))
        if z.ndim != 2:
            continue
        rows, cols = heatmap.strides(*z.shape, max_cells=max(1, max_cells // len(maps)))
        if rows == cols == 1:
            continue
        trace["z"] = typed_array(np.ascontiguousarray(z[::rows, ::cols]))
        for axis, stride in (("y", rows), ("x", cols)):
            if isinstance(trace.get(axis), dict | list):
                trace[axis] = _sampled(unwire(trace[axis]), stride)
        for key in ("text", "customdata"):
            if key in trace:
                trace[key] = _sampled_2d(unwire(trace[key]), rows, cols)
    return fig


def _as_float32(node: Any) -> Any:
    if isinstance(node, dict):
        if node.get("dtype") == "f8" and "bdata" in node:
            return typed_array(np.asarray(unwire(node), dtype=np.float32))
        return {k: _as_float32(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_as_float32(v) for v in node]
    return node


def _sampled(axis: Any, stride: int) -> Any:
    return typed_array(np.ascontiguousarray(axis[::stride])) if isinstance(axis, np.ndarray) else axis[::stride]


def _sampled_2d(grid: Any, rows: int, cols: int) -> Any:
    if isinstance(grid, np.ndarray) and grid.ndim == 2:
        return typed_array(np.ascontiguousarray(grid[::rows, ::cols]))
    if isinstance(grid, list) and grid and isinstance(grid[0], list):
        return [row[::cols] for row in grid[::rows]]
    return grid
