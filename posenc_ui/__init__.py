r"""posenc_ui — what every page of the app shares.

A page is four steps, always in this order: its widgets (seeded from the URL, :mod:`.state`), one cached call into
:mod:`posenc_core` per figure (a lesson's ``view.py``), a pure figure builder (its ``figures.py``: arrays in,
``go.Figure`` out), and the explain panel (formula beside the core function's source, the paper, the live check).
:mod:`.lessons` holds one folder per page (view, figures, words); the kit the lessons use is :mod:`.lesson` (View,
PageEntry, Check), :mod:`.figures` (style, heatmaps, slider frames) and :mod:`.frame`, which wires them to Streamlit;
:mod:`.i18n` holds every visible word in Chinese and English; :mod:`.export` turns figures into offline HTML, PNG and
SVG, and writes a whole static site with ``python -m posenc_ui.export``; :func:`figure` (:mod:`.notebook`) draws any
page's figure in a Jupyter or Quarto notebook.

Nothing here does encoding maths: every number on screen comes from a :mod:`posenc_core` call.
"""

import pandas  # noqa: F401  (eagerly: plotly reads sys.modules["pandas"], half-imported while another thread imports it)

__all__ = ["figure"]


def __getattr__(name: str) -> object:
    r"""``posenc_ui.figure`` (:mod:`.notebook`, docs/notebooks.md), loaded on first use: the views it draws from load
    with it, so importing any other part of the package loads no page."""
    if name == "figure":
        from .notebook import figure

        return figure
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
