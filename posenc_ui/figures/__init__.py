r"""The figure kit every lesson's builders use (a page's own builders live in its folder,
``posenc_ui/lessons/<id>/figures.py``): no Streamlit, no core calls.

:mod:`.style` holds the shared colours, axis titles and template, :mod:`.heatmap` the screen-resolution sampling every
heatmap goes through, :mod:`.frames` a slider as plotly.js frames and :mod:`.built` a figure kept as the JSON it sends.
"""

import plotly.io as pio

# Every figure reaches JSON through plotly.io: Streamlit's st.plotly_chart on every rerun, the HTML export on a click.
# orjson (requirements.txt) halves that cost (six 256² heatmaps: 22 → 10 ms) and writes Chinese as characters, not
# \uXXXX escapes, so an exported page stays readable as text. Named rather than left to plotly's "auto": a missing
# orjson fails loudly instead of silently falling back.
pio.json.config.default_engine = "orjson"
