r"""posenc_ui — what every page of the app shares.

A page is four steps, always in this order: its widgets (seeded from the URL, :mod:`.state`), one cached call into
:mod:`posenc_core` per figure (:mod:`.views`), a pure figure builder (:mod:`.figures`: arrays in, ``go.Figure`` out),
and the explain panel (formula beside the core function's source, the paper, the live check). :mod:`.frame` wires
them to Streamlit; :mod:`.i18n` holds every visible word in Chinese and English; :mod:`.export` turns figures into
offline HTML, PNG and SVG, and writes a whole static site with ``python -m posenc_ui.export``.

Nothing here does encoding maths: every number on screen comes from a :mod:`posenc_core` call.
"""

import pandas  # noqa: F401  (eagerly: plotly reads sys.modules["pandas"], half-imported while another thread imports it)
