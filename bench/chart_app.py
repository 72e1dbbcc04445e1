r"""RoPE's twelve figures behind one slider, drawn by ``st.plotly_chart`` or by the app's chart component.

``streamlit run bench/chart_app.py``, then ``/?charts=streamlit`` or ``/?charts=posenc``: the comparison that
``python bench/bench_browser.py --charts`` times (why the app draws through :mod:`posenc_ui.frame.chart`). Every
figure changes with d, as on the RoPE page, and both ways send the same figures.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import streamlit as st

from posenc_ui.frame.chart import plotly_chart
from posenc_ui.lessons.rope.view import VIEW
from posenc_ui.state import defaults


@st.cache_resource
def figures(dim: int) -> list:
    values = {**defaults(VIEW.params, "en"), "dim": dim}
    return [build(values, "en") for build in VIEW.figures.values()]


way = st.query_params.get("charts", "posenc")
dim = st.slider("d", 64, 192, 128, step=2)
for i, fig in enumerate(figures(dim)):
    if way == "streamlit":
        st.plotly_chart(fig, theme=None, key=f"streamlit.{i}")
    else:
        plotly_chart(fig, config={}, key=f"posenc.{i}")
