r"""Getting around: the translated reading path (sidebar and home cards), the next-page link and the share box.

Every link carries the language and what the session last had on the page it opens (:func:`link_params`), since
a page switch drops the query string.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from urllib.parse import urlencode

import streamlit as st

from .. import catalog
from ..catalog import PageEntry
from ..i18n import t
from .widgets import remembered

EMBED_HEIGHT = 720  # px of the <iframe> snippet


@functools.cache
def streamlit_page(script: str) -> st.Page:
    r"""The ``st.Page`` of a script, made once per process (the first time a page draws its links).

    ``st.page_link("pages/x.py")`` resolves the path on the disk again for every link on every rerun, a dozen
    ``realpath`` calls whose system calls each hand the GIL over under load; a ``Page`` object carries its hash.
    The home script is the default page (URL ``/``), as Streamlit registers it.
    """
    return st.Page(script, default=script == catalog.HOME_SCRIPT)


def link_params(page: PageEntry, lang: str) -> dict[str, str]:
    r"""The query string a link to ``page`` carries: the language and what the session last had there."""
    return {"lang": lang, **remembered(page.id)}


def navigation(lang: str) -> None:
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
            st.page_link(streamlit_page(page.script), label=label, query_params=link_params(page, lang))


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
    st.page_link(streamlit_page(page.script), label=t("home.open", lang), icon=":material/arrow_forward:",
                 query_params=link_params(page, lang))  # fmt: skip


def next_link(page: PageEntry | None, lang: str) -> None:
    r"""A link to the page after ``page`` in reading order (none after the last page, or on the home page)."""
    upcoming = catalog.next_page(page.id) if page is not None else None
    if upcoming is not None:
        st.page_link(
            streamlit_page(upcoming.script),
            label=t("nav.next", lang, title=t(upcoming.title_key, lang)),
            icon=":material/arrow_forward:",
            query_params=link_params(upcoming, lang),
        )


def share_link(page: PageEntry | None, params: Mapping[str, str], *, embed: bool = False) -> str:
    r"""An absolute link to this page in this state (``embed=True`` adds Streamlit's embed flag)."""
    base = st.context.url or f"http://localhost:8501/{page.url_path if page else ''}"
    query = dict(params, embed="true") if embed else dict(params)
    return f"{base}?{urlencode(query)}"


def share_box(page: PageEntry | None, params: Mapping[str, str], lang: str) -> None:
    r"""The link and an ``<iframe>`` snippet for the current state, each with Streamlit's copy button."""
    with st.expander(t("share.title", lang), icon=":material/share:"):
        st.caption(t("share.link", lang))
        st.code(share_link(page, params), language=None, wrap_lines=True)
        st.caption(t("share.embed", lang))
        src = share_link(page, params, embed=True)
        snippet = f'<iframe src="{src}" width="100%" height="{EMBED_HEIGHT}" style="border:0" loading="lazy"></iframe>'
        st.code(snippet, language="html", wrap_lines=True)
