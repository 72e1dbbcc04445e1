r"""Pure figure builders: NumPy arrays (and the language) in, a ``go.Figure`` out — no Streamlit, no core calls.

One module per page topic; :mod:`.style` holds the shared colours, axis titles and template, :mod:`.heatmap` the
screen-resolution sampling every heatmap goes through.
"""
