r"""Widgets and URL state: seed each widget once (URL, else this session's memory, else the default), draw it from
its :class:`~posenc_ui.state.Param`, and write the values back to the address bar.

Page switches drop the query string and the state of widgets not drawn (docs/streamlit.md), so each page's encoded
values are also kept in ``st.session_state[MEMORY]`` and carried by the navigation links.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from ..i18n import t
from ..lesson import View
from ..refusals import code_span
from ..state import BoolParam, ChoiceParam, FollowingChoiceParam, IntListParam, IntParam, Param, Problem

MEMORY = "_posenc_memory"  # {page_id: {name: encoded value}}: survives page switches
URL_SENT = "_posenc_url_sent"  # the query string this session last wrote (write_url)


def widget_key(page_id: str, name: str) -> str:
    r"""The session-state key of a page's widget (page-qualified: two pages may both have a ``length``)."""
    return f"{page_id}.{name}"


def seed(view: View, lang: str | None = None) -> list[Problem]:
    r"""Put a value under every widget key that has none yet; return what the URL got wrong."""
    memory: Mapping[str, str] = st.session_state.get(MEMORY, {}).get(view.page_id, {})
    url = {name: st.query_params.get_all(name) for name in st.query_params}
    state: dict[str, Any] = {}
    problems: list[Problem] = []
    for param in view.params:
        key = widget_key(view.page_id, param.name)
        if key in st.session_state:
            value = st.session_state[key]
            # Set again through the Session State API: Streamlit drops the state of a widget a run does not draw (the
            # lab's lag while another task is chosen), and the widget drawn again later came back at its first option
            # while the page still read the old value; a value set this way is kept until the widget returns.
            st.session_state[key] = value
            state[param.name] = tuple(value) if isinstance(value, list) else value
            continue
        raw = url.get(param.name) or memory.get(param.name)
        if raw is None:
            value, problem = param.clamp(param.default_in(lang), state), None
        else:
            value, problem = param.parse(raw, state)
        if problem is not None and param.name in url:
            problems.append(problem)
        state[param.name] = value
        st.session_state[key] = list(value) if isinstance(value, tuple) else value
    return problems


def draw_widget(param: Param, label: str, key: str, current: Mapping[str, Any], fmt: Callable[[Any], str]) -> Any:
    r"""The Streamlit widget of ``param`` (its value already seeded under ``key``); returns what it shows.

    ``current`` holds the page's values (a bound may follow another widget), ``fmt`` labels a choice's options.
    """
    if isinstance(param, IntParam):
        # value= is the seeded value itself (the key still decides the widget). Without it, Streamlit 1.67 builds the
        # whole presented session state once per slider to learn whether the value is a range: under cProfile, 7 % of
        # a RoPE rerun (seven sliders), 4 % of a Sinusoidal one. docs/streamlit.md, "Widget and URL state".
        upper = param.upper(current)
        return st.slider(label, param.lo, upper, st.session_state[key], step=param.step, key=key)
    if isinstance(param, BoolParam):
        return st.toggle(label, key=key)
    if isinstance(param, IntListParam):
        options = range(param.lo, param.upper(current) + 1)
        return st.multiselect(label, options, key=key, max_selections=param.max_items)
    if isinstance(param, FollowingChoiceParam):
        if param.widget == "radio":
            return st.radio(label, param.options_of(current), format_func=fmt, key=key, horizontal=True)
        return st.selectbox(label, param.options_of(current), format_func=fmt, key=key)
    if isinstance(param, ChoiceParam):
        if param.widget == "select_slider":
            return st.select_slider(label, options=param.options, format_func=fmt, key=key)
        if param.widget == "selectbox":  # many options: one line on a phone
            return st.selectbox(label, param.options, format_func=fmt, key=key)
        if param.widget == "radio":  # long labels: a radio wraps on a phone, a segmented control does not
            return st.radio(label, param.options, format_func=fmt, key=key, horizontal=True)
        return st.segmented_control(label, param.options, format_func=fmt, key=key, required=True)
    raise TypeError(f"no widget for {type(param).__name__}")


def draw_text_box(label: str, key: str, *, height: int) -> str:
    r"""A text area for pasted text, seeded and remembered like every other widget (key only, never ``value=``)."""
    return st.text_area(label, key=key, height=height)  # no max_chars: the browser would drop a long paste silently


def option_label(param: ChoiceParam, page_id: str, lang: str) -> Callable[[Any], str]:
    r"""How a choice's options read: whole numbers with thousands separators, fractions as written (0.125), words from
    ``<labels or page.name>.<v>``.

    A plain dict's lookup, not a closure: Streamlit keeps each widget's ``format_func`` for the whole session.
    """
    if isinstance(param.options[0], int | float):
        return lambda v: f"{v:,.0f}" if float(v).is_integer() else f"{v:g}"
    prefix = param.labels or f"{page_id}.{param.name}"
    return {v: t(f"{prefix}.{v}", lang) for v in param.options}.__getitem__


def following_label(param: FollowingChoiceParam, current: Mapping[str, Any], lang: str) -> Callable[[Any], str]:
    r"""How a following choice's options read: ``<labels>.<v>`` when it names labels, else as they are (a config's own
    names). A plain dict's lookup, as :func:`option_label`'s."""
    if param.labels is None:
        return str
    return {v: t(f"{param.labels}.{v}", lang) for v in param.options_of(current)}.__getitem__


def url_is_stale(asked: Mapping[str, str], last_sent: Mapping[str, str] | None, wanted: Mapping[str, str]) -> bool:
    r"""Whether the address bar may not show ``wanted`` unless this run writes it.

    ``asked`` is the query string the browser sent with this rerun; ``last_sent`` what an earlier run of this session
    last wrote (``None`` before any). Both must equal ``wanted`` to skip the write: the browser may have asked for this
    rerun before that last write reached it (▶ then ◀ at once), so its address bar ends at ``last_sent``.
    """
    return dict(asked) != dict(wanted) or (last_sent is not None and dict(last_sent) != dict(wanted))


def write_url(params: Mapping[str, str]) -> None:
    r"""Make the address bar reproduce the view (only when it may not already, to spare the browser a message).

    Remembered only once sent: Streamlit stops a run for a rerun before it sends a message, never after, so
    ``URL_SENT`` is always the last query string on its way to the browser.
    """
    if url_is_stale(st.query_params.to_dict(), st.session_state.get(URL_SENT), params):
        st.query_params.from_dict(params)
        st.session_state[URL_SENT] = dict(params)


def remember(page_id: str, encoded: Mapping[str, str]) -> None:
    r"""Keep the page's encoded values for this session: links to the page carry them, and they re-seed it."""
    st.session_state.setdefault(MEMORY, {})[page_id] = dict(encoded)


def remembered(page_id: str) -> dict[str, str]:
    r"""What this session last had on page ``page_id`` (encoded, as a URL carries it)."""
    return dict(st.session_state.get(MEMORY, {}).get(page_id, {}))


def notice(problem: Problem, lang: str, view: View | None = None) -> str:
    r"""The visible sentence for a URL value that was replaced or clamped (the raw value shown as code only); the value
    used instead is named as its control shows it (a model's name, not its internal id)."""
    setting = code_span(f"{problem.name}={problem.raw}")
    return t(f"frame.url_{problem.kind}", lang, setting=setting, used=_shown(problem, lang, view))


def _shown(problem: Problem, lang: str, view: View | None) -> str:
    param = next((p for p in view.params if p.name == problem.name), None) if view is not None else None
    if isinstance(param, ChoiceParam):
        option = next((o for o in param.options if param.encode(o) == problem.used), None)
        if option is not None:
            return f"**{option_label(param, view.page_id, lang)(option)}**"
    return code_span(problem.used)
