r"""The floor a slider move cannot beat on this machine: a bare Streamlit page, one slider and one small heatmap.

``python bench/bench_browser.py`` starts it beside the app (``streamlit run bench/floor_app.py``) and moves its slider
between the moves of every app slider, so each slider's median is given as a ratio to this page's, measured in the
same minutes (issue 46: goal ≤ 1.5×). Streamlit as it comes: ``st.plotly_chart``, no fragments, no page frame.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

n = st.slider("n", 4, 64, 16)
cells = np.sin(np.outer(np.arange(n), np.arange(16)) / n)  # (n, 16): a small heatmap that changes with every move
st.plotly_chart(go.Figure(go.Heatmap(z=cells)), key="floor")
