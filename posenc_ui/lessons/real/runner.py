r"""The real-model page's Streamlit parts: the first load's progress message, what the text box's text is to the
model, and the model's work done outside the page's turn.

torch and transformers are imported here only through :func:`.model.shared_model`, the first time a text other than
the shipped passage needs the model in a server process (the shipped passage's results are shipped, :mod:`.shipped`;
the other pages never import them: ``tests/app/test_no_torch.py``). The fetch and the load take
seconds to minutes; they run with the page's turn given up (:mod:`posenc_ui.turns`), under a status box that names
each step, so other students' pages go on meanwhile. A session that opens the page while another is loading the
model says so and waits for that same load. The forwards a setting needs are run the same way, before the figures
ask for them (:func:`prepare`), so that drawing the page holds the turn only as long as any other page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from posenc_core import PosEncError

from ...frame import Page
from ...frame.widgets import widget_key
from ...lesson import Values, reads
from ...refusals import refusal_text
from ...turns import TURNS
from . import model, shipped

LAST_TEXT = "real.last_accepted_text"  # session state: the text the figures read when the box's text is refused


@reads("text")
def _shipped(v: Values) -> bool:
    return shipped.answers(v["text"])


@reads("text")
def _text(v: Values) -> str:
    return v["text"]


def ready(page: Page) -> bool:
    r"""Whether the page can draw: the model is loaded, or the text is the shipped passage, whose results are shipped
    (:mod:`.shipped`). Otherwise, on the first visit of a process, load the model under a status box naming each
    step. When it cannot be had, say what is missing and how to get it; the figures then read the shipped passage
    (when its results are shipped: ``True``), or the page stops there (``False``)."""
    if model.loaded() or page.ask(_shipped):
        return True
    lang = page.lang
    with st.status(page.t("real.loading"), expanded=True) as status:
        if model.loading_elsewhere():
            st.write(page.t("real.step.waiting"))

        def say(step: str) -> None:
            status.update(label=page.t(f"real.step.{step}"))
            st.write(page.t(f"real.step.{step}"))

        try:
            with TURNS.aside():  # seconds to minutes: other students' pages go on meanwhile
                model.shared_model(progress=say)
        except PosEncError as err:
            status.update(label=page.t("real.load_failed"), state="error", expanded=True)
            answered = shipped.answers(shipped.DEFAULT_TEXT)
            instead = f" {page.t('real.reads_default')}" if answered else ""
            st.error(refusal_text(err, lang) + instead, icon=":material/cloud_off:")
            if answered:
                page.reads_instead("text", shipped.DEFAULT_TEXT)
            return answered
        status.update(label=page.t("real.loaded"), state="complete", expanded=False)
    return True


def text_status(page: Page) -> None:
    r"""Under the text box: how many tokens the model reads. A text the page refuses is answered by why, and the
    figures below read instead the last text accepted in this session (the shipped passage at first): every section
    stays drawn and live, and its words describe what it draws."""
    key = widget_key(page.view.page_id, "text")
    try:
        ids = prepare(page, model.text_ids)
    except PosEncError as err:
        last = st.session_state.get(LAST_TEXT)
        reads = page.t("real.reads_last" if last is not None else "real.reads_default")
        st.error(f"{refusal_text(err, page.lang)} {reads}", icon=":material/error:")
        page.reads_instead("text", shipped.DEFAULT_TEXT if last is None else last)
        ids = prepare(page, model.text_ids)
        st.caption(page.t("real.tokens_instead", tokens=f"{ids.size:,}"))
        return
    if page.ask(_text) != st.session_state[key]:  # the model could not be had: the figures read the shipped passage
        st.caption(page.t("real.tokens_instead", tokens=f"{ids.size:,}"))
        return
    st.session_state[LAST_TEXT] = st.session_state[key]
    if page.ask(_shipped):  # one caption, short: the first figure still fits a phone's first screen
        st.caption(page.t("real.shipped", tokens=f"{ids.size:,}"))
    else:
        st.caption(page.t("real.tokens", tokens=f"{ids.size:,}", limit=model.MAX_TOKENS))


def prepare(page: Page, recipe: Callable[..., Any]) -> Any:
    r"""``recipe(values)`` (memoized computations that run the model, :func:`~posenc_ui.lesson.reads` declaring what
    it reads) with the page's turn given up, under a spinner (shown after half a second: not when the app's memory
    has the result); its result or its refusal, as the figures will find them."""
    with st.spinner(page.t("real.computing"), show_time=True), TURNS.aside():
        return page.ask(recipe)


def warm(page: Page, recipe: Callable[..., Any]) -> None:
    r""":func:`prepare` for a section: a refusal is left for its figures to say, in their place."""
    try:
        prepare(page, recipe)
    except PosEncError:
        pass
