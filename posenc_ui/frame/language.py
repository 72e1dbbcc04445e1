r"""The reader's language: chosen from the switch, the URL, the session or the browser, and the switch itself."""

from __future__ import annotations

import streamlit as st

from ..i18n import DEFAULT_LANG, LANGS, lang_from_locale, t

LANG_MEMORY = "_posenc_lang"  # the session's language: survives page switches, which drop the switch's state
LANG_WIDGET = "_posenc_lang_widget"
LANG_NAMES = {"zh": "中文", "en": "English"}


def resolve_lang() -> str:
    r"""The language: the switch if drawn this session, else ``?lang=``, else the session's, browser's, English."""
    lang = st.session_state.get(LANG_WIDGET)
    if lang not in LANGS:  # first run of the session, or the switch's state was dropped by a page change
        lang = pick_lang(st.query_params.get("lang"), st.session_state.get(LANG_MEMORY), st.context.locale)
        st.session_state[LANG_WIDGET] = lang
    st.session_state[LANG_MEMORY] = lang
    return lang


def pick_lang(url: str | None, remembered: str | None, locale: str | None) -> str:
    r"""The first of: the URL's ``lang`` (if one we have), the session's, the browser locale's, English."""
    for candidate in (url, remembered, lang_from_locale(locale)):
        if candidate in LANGS:
            return candidate
    return DEFAULT_LANG


def language_switch(lang: str) -> None:
    r"""The zh / en switch (its label is hidden: the two language names say what it is)."""
    st.segmented_control(
        t("frame.language", lang),
        LANGS,
        format_func=LANG_NAMES.__getitem__,
        key=LANG_WIDGET,
        required=True,
        label_visibility="collapsed",
    )
