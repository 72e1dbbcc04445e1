r"""Getting around: the translated reading path (sidebar and home cards), the next-page link, the share box and the
reset button.

Every link carries the language and what the session last had on the page it opens (:func:`link_params`), since
a page switch drops the query string; in presenter mode it also carries ``present=true``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from urllib.parse import urlencode

import streamlit as st

from .. import catalog
from ..catalog import PageEntry
from ..i18n import t
from ..lesson import View
from ..state import defaults
from .panels import folded
from .widgets import MEMORY, remembered, widget_key

EMBED_HEIGHT = 720  # px of the <iframe> snippet


@functools.cache
def streamlit_page(script: str) -> st.Page:
    r"""The ``st.Page`` of a script, made once per process (the first time a page draws its links).

    ``st.page_link("pages/x.py")`` resolves the path on the disk again for every link on every rerun, a dozen
    ``realpath`` calls whose system calls each hand the GIL over under load; a ``Page`` object carries its hash.
    The home script is the default page (URL ``/``), as Streamlit registers it.
    """
    return st.Page(script, default=script == catalog.HOME_SCRIPT)


def link_params(page: PageEntry, lang: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    r"""The query string a link to ``page`` carries: the language, what the session last had there, and ``extra``
    (``present=true`` in presenter mode)."""
    return {"lang": lang, **(extra or {}), **remembered(page.id)}


def navigation(lang: str, extra: Mapping[str, str] | None = None) -> None:
    r"""The translated reading path in the sidebar: home, then every page by number."""
    with st.sidebar:
        st.page_link(
            streamlit_page(catalog.HOME_SCRIPT),
            label=t("nav.home", lang),
            icon=":material/home:",
            query_params={"lang": lang},
        )
        for page in catalog.PAGES:
            label = f"{page.number}. {t(page.title_key, lang)}"
            st.page_link(streamlit_page(page.script), label=label, query_params=link_params(page, lang, extra))


def reading_path(lang: str, *, columns: int = 3) -> None:
    r"""One card per page of the reading path: number, title, one-line promise, preview, link.

    Laid out row by row, so cards of a row line up and a phone (where columns stack) reads them in order.
    """
    pages = catalog.PAGES
    for start in range(0, len(pages), columns):
        for col, page in zip(st.columns(columns), pages[start : start + columns], strict=False):
            with col.container(border=True, height="stretch"):
                page_card(page, lang)


def page_card(page: PageEntry, lang: str) -> None:
    r"""The contents of one reading-path card."""
    st.markdown(f"**{page.number} · {t(page.title_key, lang)}**")
    st.caption(t(page.promise_key, lang))
    preview = catalog.preview(page)
    if preview is not None:
        st.image(str(preview), width="stretch")
    st.page_link(
        streamlit_page(page.script),
        label=t("home.open", lang),
        icon=":material/arrow_forward:",
        query_params=link_params(page, lang),
    )


def next_link(page: PageEntry | None, lang: str, extra: Mapping[str, str] | None = None) -> None:
    r"""A link to the page after ``page`` in reading order (none after the last page, or on the home page)."""
    upcoming = catalog.next_page(page.id) if page is not None else None
    if upcoming is not None:
        st.page_link(
            streamlit_page(upcoming.script),
            label=t("nav.next", lang, title=t(upcoming.title_key, lang)),
            icon=":material/arrow_forward:",
            query_params=link_params(upcoming, lang, extra),
        )


def share_link(page: PageEntry | None, params: Mapping[str, str], *, embed: bool = False) -> str:
    r"""An absolute link to this page in this state (``embed=True`` adds Streamlit's embed flag)."""
    base = st.context.url or f"http://localhost:8501/{page.url_path if page else ''}"
    query = dict(params, embed="true") if embed else dict(params)
    return f"{base}?{urlencode(query)}"


def share_box(
    page: PageEntry | None, params: Mapping[str, str], lang: str, figures: Callable[[], Mapping[str, str]]
) -> bool:
    r"""The link (optionally in presenter mode) and an ``<iframe>`` snippet of the whole page or of one figure
    (``figures()``: name → title), each with Streamlit's copy button; folded until opened. Whether it is open."""
    key = f"share.{page.id if page else 'home'}"
    box = folded(t("share.title", lang), f"{key}.box", ":material/share:")
    if box is None:
        return False
    with box:
        st.caption(t("share.link", lang))
        present = st.toggle(t("share.present", lang), key=f"{key}.present", help=t("share.present_help", lang))
        st.code(share_link(page, dict(params, present="true") if present else params), language=None, wrap_lines=True)
        st.caption(t("share.embed", lang))
        labels = {"": t("share.whole_page", lang), **figures()}  # a plain dict's lookup (format_func lives on)
        figure = st.selectbox(
            t("share.figure", lang), list(labels), format_func=labels.__getitem__, key=f"{key}.figure"
        )
        src = share_link(page, dict(params, figure=figure) if figure else params, embed=True)
        snippet = f'<iframe src="{src}" width="100%" height="{EMBED_HEIGHT}" style="border:0" loading="lazy"></iframe>'
        st.code(snippet, language="html", wrap_lines=True)
    return True


def reset_page(view: View, lang: str) -> None:
    r"""Every widget of the page back to its default, and nothing of the page left in this session's memory.

    A button callback: it runs before the rerun draws the widgets (Streamlit forbids changing a drawn widget's
    value), and the rerun writes only values that differ from their defaults to the URL, so the page's go.
    """
    for name, value in defaults(view.params, lang).items():
        st.session_state[widget_key(view.page_id, name)] = list(value) if isinstance(value, tuple) else value
    st.session_state.get(MEMORY, {}).pop(view.page_id, None)


def reset_button(view: View, lang: str) -> None:
    r"""The sidebar's "reset to defaults" button (teaching pages with widgets only)."""
    if view.params and view.page_id in catalog.BY_ID:
        st.sidebar.button(
            t("frame.reset", lang),
            icon=":material/restart_alt:",
            key="reset",
            width="stretch",
            on_click=reset_page,
            args=(view, lang),
            help=t("frame.reset_help", lang),
        )
