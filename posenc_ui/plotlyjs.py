r"""Which plotly.js a figure needs: the cartesian bundle in ``static/``, or the full one.

plotly.js publishes partial bundles. Its *cartesian* bundle (npm ``plotly.js-cartesian-dist-min``, the same release
as the plotly.js of the ``plotly`` package in ``requirements.txt``) is 1.5 MB against 4.7 MB, and registers the
trace types in :data:`LEAN_TRACES`. Those draw every figure of the app but the context-extension page's polar arcs
(``barpolar``). The charts in the app load it (:mod:`posenc_ui.frame.chart`), and so does an exported HTML
(:mod:`posenc_ui.export`): a figure whose traces, frames included, are all of those types gets the cartesian bundle;
any other gets the full one. Without Streamlit, so that the export command needs none.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import plotly.graph_objects as go
import plotly.offline

#: plotly.js's cartesian bundle, as published on npm (``plotly.js-cartesian-dist-min``), in ``static/``.
LEAN_BUNDLE = Path(__file__).resolve().parents[1] / "static" / "plotly-cartesian-4.1.1.min.js"
#: The trace types that bundle registers (``tests/app/test_chart.py`` reads them out of the file).
LEAN_TRACES = (
    "bar",
    "box",
    "contour",
    "heatmap",
    "histogram",
    "histogram2d",
    "histogram2dcontour",
    "image",
    "pie",
    "scatter",
    "scatterternary",
    "violin",
)
#: The file name the full bundle gets beside exported figures (``python -m posenc_ui.export``).
FULL_NAME = "plotly.min.js"


def trace_types(fig: go.Figure) -> set[str]:
    r"""The trace types ``fig`` draws, in its data and in every frame (a frame may bring a type of its own)."""
    return {trace.type for trace in fig.data} | {trace.type for frame in fig.frames for trace in frame.data}


def fits_lean(fig: go.Figure) -> bool:
    r"""Whether the cartesian bundle draws every trace of ``fig``."""
    return trace_types(fig) <= set(LEAN_TRACES)


def bundle_name(fig: go.Figure) -> str:
    r"""The file name of the bundle ``fig`` needs: :data:`LEAN_BUNDLE`'s, or :data:`FULL_NAME`."""
    return LEAN_BUNDLE.name if fits_lean(fig) else FULL_NAME


@cache
def bundle_text(name: str) -> str:
    r"""The JavaScript of the bundle named ``name`` (:func:`bundle_name`), read once per process."""
    if name == FULL_NAME:
        return plotly.offline.get_plotlyjs()
    if name != LEAN_BUNDLE.name:
        raise ValueError(f"no plotly.js bundle named {name!r}")
    if not LEAN_BUNDLE.is_file():
        raise RuntimeError(f"{LEAN_BUNDLE} is missing: figures load plotly.js's cartesian bundle from it")
    return LEAN_BUNDLE.read_text(encoding="utf-8")
