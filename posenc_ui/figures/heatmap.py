r"""Heatmaps at screen resolution: which rows and columns to send, and the one trace every heatmap uses.

A figure travels to the browser as one JSON message; a 4096 × 1024 float64 table would be 45 MB. Sampling every
s-th row and column keeps the picture (a screen shows a few hundred cells a side anyway), keeps the *true values*
of the rows shown (averaging would blur a fast sinusoid to zero), and is sent as float32: at most
:data:`MAX_SIDE` cells a side and :data:`MAX_CELLS` in all, under 1 MB of JSON.
"""

from __future__ import annotations

import math

import numpy as np

MAX_SIDE = 512
#: float32 → base64 (×4/3): ~5.3 bytes a cell in the sent JSON, ~0.64 MB at most.
MAX_CELLS = 120_000


def strides(n_rows: int, n_cols: int, *, max_side: int = MAX_SIDE, max_cells: int = MAX_CELLS) -> tuple[int, int]:
    r"""Row and column strides (≥ 1) so that ⌈n_rows/sr⌉ ≤ max_side, ⌈n_cols/sc⌉ ≤ max_side, product ≤ max_cells."""
    row_stride = math.ceil(n_rows / max_side)
    col_stride = math.ceil(n_cols / max_side)
    while math.ceil(n_rows / row_stride) * math.ceil(n_cols / col_stride) > max_cells:
        if math.ceil(n_rows / row_stride) >= math.ceil(n_cols / col_stride):
            row_stride += 1
        else:
            col_stride += 1
    return row_stride, col_stride


def pair_columns(dim: int, stride: int, layout: str = "interleaved") -> np.ndarray:
    r"""Columns of every ``stride``-th (sin, cos) pair, both members kept (sampling single columns of an
    interleaved table with an even stride would show only sines).

    ``layout`` is the table's: ``"interleaved"`` (pair i in columns 2i, 2i + 1) or ``"concat"`` (i, d/2 + i).
    """
    if stride <= 1:
        return np.arange(dim)
    pairs = np.arange(0, dim // 2, stride)  # every stride-th pair, two columns each: ≈ dim / stride columns
    if layout == "interleaved":
        return np.stack([2 * pairs, 2 * pairs + 1], axis=1).ravel()
    return np.concatenate([pairs, dim // 2 + pairs])


def heatmap_trace(
    z: np.ndarray,
    *,
    x: np.ndarray | None = None,
    y: np.ndarray | None = None,
    colorscale: object,
    zmid: float | None = None,
    zmin: float | None = None,
    zmax: float | None = None,
    hover: str = "x %{x}<br>y %{y}<br>%{z:.3f}",
    colorbar_title: str | None = None,
    showscale: bool = True,
    **extra: object,
) -> dict:
    r"""A float32 heatmap trace (a dict for :func:`~posenc_ui.figures.style.figure`); ``x`` of non-uniform
    numbers is sent as category labels so every cell has the same width."""
    if x is not None and x.dtype.kind in "iuf" and x.size > 2 and np.unique(np.diff(x)).size > 1:
        x = np.asarray([str(v) for v in x])
    trace = {
        "type": "heatmap",
        "z": np.ascontiguousarray(z, dtype=np.float32),
        "colorscale": colorscale,
        "hovertemplate": hover + "<extra></extra>",
        "colorbar": {"title": {"text": colorbar_title or ""}, "thickness": 12, "len": 0.9},
        "showscale": showscale,
        **extra,
    }
    optional = {"x": x, "y": y, "zmid": zmid, "zmin": zmin, "zmax": zmax}
    return trace | {key: value for key, value in optional.items() if value is not None}
