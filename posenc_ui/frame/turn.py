r"""The page's turn: open it (page config, language, URL → widgets, header, key takeaway, navigation, notices), let
the page script draw, then finish it (values → URL, export and share boxes, next page).

In presenter mode and in a single-figure embed the frame draws the one figure itself and the page script's block
never runs (:mod:`.present`).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from .. import catalog
from ..i18n import LANGS, t
from ..lesson import View
from ..paths import ROOT
from ..state import Problem
from ..turns import TURNS
from .chart import preload_plotly
from .language import language_switch, resolve_lang
from .navigation import navigation, next_link, reset_button
from .page import Page
from .present import PRESENT, asked_figure, embed_figure, present, presenting, unknown_figure_notice
from .process import settle_process
from .widgets import notice, seed

#: The app's CSS, on every page. Phones and narrow windows (≤ 640 px): less blank space above the title and a smaller
#: title, so the first figure starts nearer the top of the first screen; wide tables scroll sideways instead of
#: squeezing their columns to a few characters; a figure is never wider than the screen. Paragraphs and checks off
#: screen are not laid out or painted (``content-visibility: auto``; one drawn before keeps its last size while off
#: screen), so a slider that redraws a whole lesson lays out and paints only the text in the window
#: (docs/benchmarks.md, "What a student feels"). Not titles, widgets or charts: a title's glyphs reach past its box,
#: which the paint containment this implies would clip.
PAGE_CSS = """<style>
[data-testid="stMain"] :is([data-testid="stMarkdown"], [data-testid="stAlert"]) {
  content-visibility: auto; contain-intrinsic-size: auto 100px;
}
[data-testid="stMarkdownContainer"] table { display: block; overflow-x: auto; max-width: 100%; }
[data-testid="stMarkdownContainer"] th, [data-testid="stMarkdownContainer"] td { min-width: 4.5em; }
@media (max-width: 640px) {
  [data-testid="stMainBlockContainer"] { padding-top: 4rem; padding-left: 0.75rem; padding-right: 0.75rem; }
  [data-testid="stMainBlockContainer"] h1 { font-size: 1.6rem; padding-top: 0.25rem; padding-bottom: 0.25rem; }
  [data-testid="stMainBlockContainer"] h2 { font-size: 1.3rem; }
  [data-testid="stMainBlockContainer"] h3 { font-size: 1.15rem; }
  [data-testid="stMarkdownContainer"] th, [data-testid="stMarkdownContainer"] td { white-space: nowrap; }
}
</style>"""

# A data: URL is passed through as is; a file path is read, re-encoded and registered again on every rerun.
FAVICON = "data:image/png;base64," + base64.b64encode((ROOT / "assets" / "favicon.png").read_bytes()).decode()


@contextmanager
def start(view: View) -> Iterator[Page]:
    r"""The page's turn: open it (:func:`open_page`), let the block draw it, then :meth:`Page.finish` it.

    An exception in the block (Streamlit stopping a run for a newer one included) skips the finish, never the
    release of the turn. When the frame drew the page's one figure itself (presenter mode, single-figure embed), the
    values are written to the URL and the run stops before the block: the page's text and panels are not drawn.
    """
    with TURNS:
        page = open_page(view)
        if page.single is not None:
            page.finish()
            st.stop()
        yield page
        page.finish()


def open_page(view: View) -> Page:
    r"""Configure the page, resolve the language, seed the widgets from the URL, draw header and navigation.

    In presenter mode or a single-figure embed, also draw that figure (``page.single`` names it).
    """
    settle_process()
    embedded = bool(st.context.is_embedded)
    lang = resolve_lang()
    entry = catalog.BY_ID.get(view.page_id)
    title = t(entry.title_key if entry else "home.title", lang)
    presenter = entry is not None and not embedded and bool(view.figures) and presenting()
    sidebar = "collapsed" if presenter else "auto"
    st.set_page_config(page_title=f"{title} · posenc", page_icon=FAVICON, layout="wide", initial_sidebar_state=sidebar)
    problems = seed(view, lang)
    asked = st.query_params.get("lang")
    if asked is not None and asked not in LANGS:  # shown once: the URL is rewritten with the language used
        problems.insert(0, Problem("lang", asked, "invalid", lang))
    single, unknown = asked_figure(view, embedded)
    page = Page(view, lang, embedded)
    if presenter:
        page.url_extra = {PRESENT: "true"}
    elif embedded:
        if single is None:
            st.subheader(title, anchor=False)
    else:
        header(title, lang)
        if page.touch:  # a phone: the takeaway follows the first figure, which must start in the first screen
            page.after_first_figure = lambda: takeaway(page)
        else:
            takeaway(page)
    if not embedded:
        navigation(lang, page.url_extra)
        reset_button(view, lang)
    if presenter:  # the title row has no room for it: the language switch waits in the collapsed sidebar
        with st.sidebar:
            language_switch(lang)
    if not embedded:  # an embed draws its figure at once; a sidebar would show in the frame
        with st.sidebar:
            preload_plotly()
    for problem in problems:
        st.warning(notice(problem, lang, view), icon=":material/link_off:")
    if unknown is not None:
        st.warning(unknown_figure_notice(unknown, list(view.figures), lang), icon=":material/link_off:")
    draw_single(page, title, presenter, single)
    return page


def draw_single(page: Page, title: str, presenter: bool, single: str | None) -> None:
    r"""Presenter mode or a single-figure embed: the frame draws the one figure (and remembers which, for the URL)."""
    if presenter:
        page.single = present(page, title, lambda: takeaway(page))
        page.url_extra = {PRESENT: "true", "figure": page.single}
        if page.single == list(page.view.figures)[-1]:
            next_link(page.entry, page.lang, {PRESENT: "true"})  # the lecture goes on, still in presenter mode
    elif single is not None:
        embed_figure(page, single)
        page.single = single
        page.url_extra = {"figure": single}


def takeaway(page: Page) -> None:
    r"""The page's key takeaway (two lines at most), under the title; none on the home page."""
    if page.entry is not None:
        st.info(f"**{page.t('frame.takeaway')}** {page.t(f'{page.view.page_id}.key_takeaway')}", icon=":material/key:")


def header(title: str, lang: str) -> None:
    r"""Title on the left, the language switch on the right (on a phone they stack, switch first visible)."""
    st.html(PAGE_CSS)
    left, right = st.columns([5, 1], vertical_alignment="bottom")
    left.title(title, anchor=False)
    with right:
        language_switch(lang)
