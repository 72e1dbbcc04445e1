r"""The frame every page calls first: page config, language, URL state, navigation and the shared panels.

A page script reads like a description of its UI::

    with start(VIEW) as page:                   # config, language, URL → widgets, navigation, notices
        page.text("intro")                      # markdown from the i18n catalogue (skipped when embedded)
        page.controls("length", "dim", "base")  # widgets built from the view's Params
        page.figure("heatmap")                  # the view's figure; errors keep the last good one
        page.explain()                          # formula beside the core source, paper (folded)
                                                # leaving: values → URL, export, share / embed box, next page

The block is the page's turn (:mod:`posenc_ui.turns`): one page script runs at a time per server process.
Page scripts and ``app.py`` call only this API, never ``st.`` themselves (``tests/app/test_page_registry.py``).

One module a job:

========================  ===================================================================================
:mod:`.turn`              :func:`start` / :func:`open_page`: the turn, page config, header
:mod:`.page`              :class:`Page`, the page API (text, widgets, paste box, figures, checks, panels)
:mod:`.widgets`           seeding widgets from the URL and the session, drawing them, writing the URL back
:mod:`.language`          the reader's language and its switch
:mod:`.navigation`        sidebar, home cards, next-page link, share / embed box, reset to defaults
:mod:`.present`           presenter mode and the single-figure embed: one figure of the view, its own controls
:mod:`.panels`            explain panel (formula, paper, source) and export panel, folded until opened
:mod:`.chart`             every figure in the browser, redrawn in place (``Plotly.react``), plotly.js preloaded
:mod:`.process`           once per server process: the GC freeze, numpy's BLAS on one thread
========================  ===================================================================================

State rules (docs/streamlit.md): a widget is seeded once, from the URL if the URL names it (parsed,
clamped, a notice when changed), else from what this session last had on that page, else its default; after the
widgets, the values are written back to the URL. Page switches drop the query string and widget state, so each
page's encoded values are also kept in ``st.session_state[MEMORY]`` and carried by the navigation links.
"""

from __future__ import annotations

from ..refusals import code_span
from .language import LANG_MEMORY, LANG_WIDGET, pick_lang, resolve_lang
from .navigation import navigation, reading_path, share_box, share_link
from .page import LAST_GOOD, Page, is_touch
from .panels import plain_title, render_checks, source_name
from .process import settle_process
from .turn import open_page, start
from .widgets import MEMORY, notice, seed, widget_key

__all__ = [
    "LANG_MEMORY",
    "LANG_WIDGET",
    "LAST_GOOD",
    "MEMORY",
    "Page",
    "code_span",
    "is_touch",
    "navigation",
    "notice",
    "open_page",
    "pick_lang",
    "plain_title",
    "reading_path",
    "render_checks",
    "resolve_lang",
    "seed",
    "settle_process",
    "share_box",
    "share_link",
    "source_name",
    "start",
    "widget_key",
]
